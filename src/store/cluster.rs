//! The cluster's rows: instances and their heartbeats, and each endpoint's
//! lease (`lease_owner`, `lease_epoch`). Lease time is the database's clock,
//! so instances with skewed clocks agree on who is alive. A lease is valid
//! while its owner's heartbeat is fresh: one heartbeat renews every lease an
//! instance holds, whatever their number.

use sea_orm::{ConnectionTrait, DbBackend, Value};

use super::{StoreError, query_all, query_in_chunks, sql};

/// The database's clock, in Unix milliseconds.
pub(crate) fn db_now(backend: DbBackend) -> &'static str {
    if backend == DbBackend::Postgres {
        "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
    } else {
        "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"
    }
}

/// The lease under which an endpoint actor claims: the claim only happens
/// while this instance still owns the endpoint under this epoch and its
/// heartbeat is fresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub instance_id: String,
    pub epoch: i64,
    pub ttl_ms: i64,
}

impl Fence {
    /// The condition, to append to a claim's WHERE, and its values.
    pub(crate) fn condition(&self, backend: DbBackend, endpoint_id: &str) -> (String, Vec<Value>) {
        (
            format!(
                " AND EXISTS (SELECT 1 FROM endpoint fe JOIN instance fi ON fi.id = fe.lease_owner \
                 WHERE fe.id = ? AND fe.lease_owner = ? AND fe.lease_epoch = ? AND fi.heartbeat_at > {} - ?)",
                db_now(backend)
            ),
            vec![
                endpoint_id.into(),
                self.instance_id.clone().into(),
                self.epoch.into(),
                self.ttl_ms.into(),
            ],
        )
    }
}

/// Who an instance is, for its row and for operators.
#[derive(Debug, Clone)]
pub struct Instance {
    pub id: String,
    pub host: String,
    pub pid: u32,
    pub version: String,
    pub listen: String,
    pub role: crate::domain::role::Role,
}

/// What an instance reports with each heartbeat.
#[derive(Debug, Clone, Copy, Default)]
pub struct Load {
    pub in_flight: usize,
    pub actors: usize,
    pub draining: bool,
}

/// Writes the instance's row (again, if a long pause had it forgotten).
pub async fn register(db: &impl ConnectionTrait, i: &Instance) -> Result<(), StoreError> {
    let backend = db.get_database_backend();
    let now = db_now(backend);
    db.execute_raw(sql(
        backend,
        &format!(
            "INSERT INTO instance (id, host, pid, version, listen, role, started_at, heartbeat_at, in_flight, actors, draining) \
             VALUES (?, ?, ?, ?, ?, ?, {now}, {now}, 0, 0, ?)"
        ),
        vec![
            i.id.clone().into(),
            i.host.clone().into(),
            i64::from(i.pid).into(),
            i.version.clone().into(),
            i.listen.clone().into(),
            i.role.name().into(),
            false.into(),
        ],
    ))
    .await?;
    Ok(())
}

/// Renews the heartbeat (and with it every lease held). `false`: the row is
/// gone, and the instance must register again.
pub async fn heartbeat(
    db: &impl ConnectionTrait,
    id: &str,
    load: Load,
) -> Result<bool, StoreError> {
    let backend = db.get_database_backend();
    let res = db
        .execute_raw(sql(
            backend,
            &format!(
                "UPDATE instance SET heartbeat_at = {}, in_flight = ?, actors = ?, draining = ? WHERE id = ?",
                db_now(backend)
            ),
            vec![
                (load.in_flight as i32).into(),
                (load.actors as i32).into(),
                load.draining.into(),
                id.into(),
            ],
        ))
        .await?;
    Ok(res.rows_affected() == 1)
}

/// A live instance as a heartbeat reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alive {
    pub id: String,
    pub draining: bool,
    /// Whether it takes endpoint leases (its role delivers).
    pub delivers: bool,
    /// Milliseconds since its last heartbeat, by the database's clock.
    pub age_ms: i64,
}

/// Instances whose heartbeat is fresher than `ttl_ms`.
pub async fn alive(db: &impl ConnectionTrait, ttl_ms: i64) -> Result<Vec<Alive>, StoreError> {
    let backend = db.get_database_backend();
    let now = db_now(backend);
    Ok(query_all(
        db,
        sql(
            backend,
            &format!(
                "SELECT id, draining, role, {now} - heartbeat_at AS age_ms FROM instance \
                 WHERE heartbeat_at > {now} - ? ORDER BY id"
            ),
            vec![ttl_ms.into()],
        ),
        |r| {
            Ok(Alive {
                id: r.try_get("", "id")?,
                draining: r.try_get("", "draining")?,
                delivers: r
                    .try_get::<String>("", "role")?
                    .parse::<crate::domain::role::Role>()
                    .map_or(true, |role| role.delivers()),
                age_ms: r.try_get("", "age_ms")?,
            })
        },
    )
    .await?)
}

/// One endpoint's lease as read from the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRow {
    pub endpoint_id: String,
    pub owner: Option<String>,
    pub epoch: i64,
}

/// Every endpoint's lease.
pub async fn leases(db: &impl ConnectionTrait) -> Result<Vec<LeaseRow>, StoreError> {
    Ok(query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT id, lease_owner, lease_epoch FROM endpoint",
            vec![],
        ),
        |r| {
            Ok(LeaseRow {
                endpoint_id: r.try_get("", "id")?,
                owner: r.try_get("", "lease_owner")?,
                epoch: r.try_get("", "lease_epoch")?,
            })
        },
    )
    .await?)
}

/// Takes the endpoints among `ids` that are free or held by a dead instance,
/// while this instance's own heartbeat is fresh; each taken lease's epoch
/// goes up by one. Returns (endpoint, new epoch) of those taken.
pub async fn take(
    db: &impl ConnectionTrait,
    me: &str,
    ids: &[String],
    ttl_ms: i64,
) -> Result<Vec<(String, i64)>, StoreError> {
    let now = db_now(db.get_database_backend());
    let text = format!(
        "UPDATE endpoint SET lease_owner = ?, lease_epoch = lease_epoch + 1 \
         WHERE id IN ({{ids}}) AND (lease_owner IS NULL OR lease_owner NOT IN \
           (SELECT id FROM instance WHERE heartbeat_at > {now} - ?)) \
         AND EXISTS (SELECT 1 FROM instance WHERE id = ? AND heartbeat_at > {now} - ?) \
         RETURNING id, lease_epoch"
    );
    let after = [ttl_ms.into(), me.into(), ttl_ms.into()];
    Ok(query_in_chunks(db, &text, &[me.into()], ids, &after, |r| {
        Ok((r.try_get("", "id")?, r.try_get("", "lease_epoch")?))
    })
    .await?)
}

/// Hands back those of `ids` held here that have nothing in flight (no
/// delivery or replay claimed and still leased at `now_ms`). Returns those
/// handed back; the rest are tried again later.
pub async fn hand_back(
    db: &impl ConnectionTrait,
    me: &str,
    ids: &[String],
    now_ms: i64,
) -> Result<Vec<String>, StoreError> {
    let text = "UPDATE endpoint SET lease_owner = NULL WHERE lease_owner = ? AND id IN ({ids}) \
         AND NOT EXISTS (SELECT 1 FROM delivery d WHERE d.endpoint_id = endpoint.id \
           AND d.state = 'delivering' AND d.next_attempt_at > ?) \
         AND NOT EXISTS (SELECT 1 FROM replay r WHERE r.endpoint_id = endpoint.id \
           AND r.claim_seq > 0 AND r.next_attempt_at > ?) \
         RETURNING id";
    let after = [now_ms.into(), now_ms.into()];
    Ok(query_in_chunks(db, text, &[me.into()], ids, &after, |r| {
        r.try_get::<String>("", "id")
    })
    .await?)
}

/// A stop: every lease held here is free at once, and the instance's row goes.
pub async fn leave(db: &impl ConnectionTrait, me: &str) -> Result<u64, StoreError> {
    let backend = db.get_database_backend();
    let freed = db
        .execute_raw(sql(
            backend,
            "UPDATE endpoint SET lease_owner = NULL WHERE lease_owner = ?",
            vec![me.into()],
        ))
        .await?
        .rows_affected();
    db.execute_raw(sql(
        backend,
        "DELETE FROM instance WHERE id = ?",
        vec![me.into()],
    ))
    .await?;
    Ok(freed)
}

/// Forgets instances silent for longer than `older_than_ms` (their leases,
/// long expired, are free to take either way).
pub async fn forget_dead(db: &impl ConnectionTrait, older_than_ms: i64) -> Result<u64, StoreError> {
    let backend = db.get_database_backend();
    Ok(db
        .execute_raw(sql(
            backend,
            &format!(
                "DELETE FROM instance WHERE heartbeat_at < {} - ?",
                db_now(backend)
            ),
            vec![older_than_ms.into()],
        ))
        .await?
        .rows_affected())
}

/// An instance as operators see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceRow {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub version: String,
    pub listen: String,
    pub started_at: i64,
    pub heartbeat_at: i64,
    /// Milliseconds since the last heartbeat, by the database's clock.
    pub heartbeat_age_ms: i64,
    pub in_flight: i32,
    pub actors: i32,
    pub draining: bool,
    /// `all`, `api` or `delivery`.
    pub role: String,
    pub endpoints_owned: i64,
}

/// Every registered instance, oldest first, with the endpoints each holds.
pub async fn instances(db: &impl ConnectionTrait) -> Result<Vec<InstanceRow>, StoreError> {
    let backend = db.get_database_backend();
    Ok(query_all(
        db,
        sql(
            backend,
            &format!(
                "SELECT i.id, i.host, i.pid, i.version, i.listen, i.started_at, i.heartbeat_at, \
                   {} - i.heartbeat_at AS age, i.in_flight, i.actors, i.draining, i.role, \
                   (SELECT COUNT(*) FROM endpoint e WHERE e.lease_owner = i.id) AS owned \
                 FROM instance i ORDER BY i.started_at, i.id",
                db_now(backend)
            ),
            vec![],
        ),
        |r| {
            Ok(InstanceRow {
                id: r.try_get("", "id")?,
                host: r.try_get("", "host")?,
                pid: r.try_get("", "pid")?,
                version: r.try_get("", "version")?,
                listen: r.try_get("", "listen")?,
                started_at: r.try_get("", "started_at")?,
                heartbeat_at: r.try_get("", "heartbeat_at")?,
                heartbeat_age_ms: r.try_get("", "age")?,
                in_flight: r.try_get("", "in_flight")?,
                actors: r.try_get("", "actors")?,
                draining: r.try_get("", "draining")?,
                role: r.try_get("", "role")?,
                endpoints_owned: r.try_get("", "owned")?,
            })
        },
    )
    .await?)
}
