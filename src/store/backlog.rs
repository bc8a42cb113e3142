//! How much work waits, for operators: deliveries by state and by endpoint,
//! and events not yet fanned out. Read across partners (operator only).

use sea_orm::{ConnectionTrait, Value};

use super::{StoreError, query_all, sql};

/// One endpoint's unfinished deliveries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointBacklog {
    pub endpoint_id: String,
    pub partner_id: String,
    pub status: String,
    /// Deliveries pending, failed (waiting to retry) or being delivered.
    pub waiting: i64,
    /// When the earliest of them is due (Unix ms).
    pub next_attempt_at: Option<i64>,
    /// Deliveries claimed and still leased: in flight, or queued in the
    /// owner's actor.
    pub in_flight: i64,
    /// The instance that holds the endpoint's lease.
    pub owner: Option<String>,
    /// The circuit as kept on the endpoint row.
    pub circuit: crate::domain::circuit::Saved,
    /// Since when every attempt has failed (Unix ms).
    pub failing_since: Option<i64>,
}

/// Unfinished deliveries, by state.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// Behind an earlier delivery of their subject (ordered endpoints).
    pub waiting: i64,
    pub pending: i64,
    pub failed: i64,
    pub delivering: i64,
}

impl Waiting {
    /// Each state with its name, in a fixed order (states without rows read 0).
    pub fn by_state(self) -> [(&'static str, i64); 4] {
        [
            ("waiting", self.waiting),
            ("pending", self.pending),
            ("failed", self.failed),
            ("delivering", self.delivering),
        ]
    }
}

/// How many deliveries wait behind their subject, are pending, failed
/// (waiting to retry) or in flight.
pub async fn waiting(db: &impl ConnectionTrait) -> Result<Waiting, StoreError> {
    let rows: Vec<(String, i64)> = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT state, COUNT(*) AS n FROM delivery \
             WHERE state IN ('waiting', 'pending', 'failed', 'delivering') GROUP BY state",
            vec![],
        ),
        |r| Ok((r.try_get("", "state")?, r.try_get("", "n")?)),
    )
    .await?;
    let mut w = Waiting::default();
    for (state, n) in rows {
        match state.as_str() {
            "waiting" => w.waiting = n,
            "pending" => w.pending = n,
            "failed" => w.failed = n,
            _ => w.delivering = n,
        }
    }
    Ok(w)
}

/// Endpoints by status, `failing` apart from the succeeding `active` ones.
pub async fn endpoints_by_status(
    db: &impl ConnectionTrait,
) -> Result<[(&'static str, i64); 4], StoreError> {
    let rows: Vec<(String, i64)> = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT CASE WHEN status = 'active' AND failing_since IS NOT NULL THEN 'failing' ELSE status END AS s, \
             COUNT(*) AS n FROM endpoint GROUP BY 1",
            vec![],
        ),
        |r| Ok((r.try_get("", "s")?, r.try_get("", "n")?)),
    )
    .await?;
    let mut out = [
        ("active", 0),
        ("failing", 0),
        ("paused", 0),
        ("disabled", 0),
    ];
    for (status, n) in rows {
        if let Some(slot) = out.iter_mut().find(|(s, _)| *s == status) {
            slot.1 = n;
        }
    }
    Ok(out)
}

/// The failing endpoints, longest-failing first (at most `limit`): id,
/// partner and `failing_since`.
pub async fn failing_endpoints(
    db: &impl ConnectionTrait,
    limit: u64,
) -> Result<Vec<(String, String, i64)>, StoreError> {
    Ok(query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT id, partner_id, failing_since FROM endpoint \
             WHERE status = 'active' AND failing_since IS NOT NULL \
             ORDER BY failing_since, id LIMIT ?",
            vec![(limit as i64).into()],
        ),
        |r| {
            Ok((
                r.try_get("", "id")?,
                r.try_get("", "partner_id")?,
                r.try_get("", "failing_since")?,
            ))
        },
    )
    .await?)
}

/// Deliveries that are not moving on their own: dead ones, paused ones
/// (their endpoint is disabled), and those waiting on one of the last two
/// scheduled attempts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stuck {
    pub dead: i64,
    pub paused: i64,
    /// On their last two attempts of a schedule of `attempts`.
    pub saturated: i64,
}

pub async fn stuck(db: &impl ConnectionTrait, attempts: usize) -> Result<Stuck, StoreError> {
    let last_two = i64::try_from(attempts.saturating_sub(2)).unwrap_or(i64::MAX);
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT SUM(CASE WHEN state = 'dead' THEN 1 ELSE 0 END) AS dead, \
             SUM(CASE WHEN state = 'paused' THEN 1 ELSE 0 END) AS paused, \
             SUM(CASE WHEN state IN ('pending', 'failed') AND scheduled_attempts >= ? THEN 1 ELSE 0 END) AS saturated \
             FROM delivery WHERE state IN ('dead', 'paused', 'pending', 'failed')",
            vec![last_two.into()],
        ),
        |r| {
            let n = |c: &str| r.try_get::<Option<i64>>("", c).map(Option::unwrap_or_default);
            Ok(Stuck {
                dead: n("dead")?,
                paused: n("paused")?,
                saturated: n("saturated")?,
            })
        },
    )
    .await?;
    Ok(rows.into_iter().next().unwrap_or_default())
}

/// Committed events not yet fanned out, and when the oldest was created.
pub async fn unpublished(db: &impl ConnectionTrait) -> Result<(i64, Option<i64>), StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox_event WHERE published_at IS NULL",
            vec![],
        ),
        |r| Ok((r.try_get("", "n")?, r.try_get("", "oldest")?)),
    )
    .await?;
    Ok(rows.into_iter().next().unwrap_or((0, None)))
}

/// Endpoints by how much waits for them, most first; of one partner if given.
pub async fn by_endpoint(
    db: &impl ConnectionTrait,
    partner_id: Option<&str>,
    limit: u32,
    now_ms: i64,
) -> Result<Vec<EndpointBacklog>, StoreError> {
    let mut values: Vec<Value> = vec![now_ms.into()];
    let mut text = String::from(
        "SELECT e.id, e.partner_id, e.status, COUNT(d.id) AS waiting, MIN(d.next_attempt_at) AS next_at, \
           SUM(CASE WHEN d.state = 'delivering' AND d.next_attempt_at > ? THEN 1 ELSE 0 END) AS in_flight, \
           e.lease_owner, e.circuit_failures, e.circuit_open_until, e.circuit_cooldown_ms, e.failing_since \
         FROM endpoint e LEFT JOIN delivery d ON d.endpoint_id = e.id \
           AND d.state IN ('pending', 'failed', 'delivering')",
    );
    if let Some(p) = partner_id {
        text.push_str(" WHERE e.partner_id = ?");
        values.push(p.into());
    }
    text.push_str(
        " GROUP BY e.id, e.partner_id, e.status, e.lease_owner, e.circuit_failures, e.circuit_open_until, \
         e.circuit_cooldown_ms, e.failing_since ORDER BY COUNT(d.id) DESC, e.id LIMIT ?",
    );
    values.push(i64::from(limit).into());
    Ok(
        query_all(db, sql(db.get_database_backend(), &text, values), |r| {
            Ok(EndpointBacklog {
                endpoint_id: r.try_get("", "id")?,
                partner_id: r.try_get("", "partner_id")?,
                status: r.try_get("", "status")?,
                waiting: r.try_get("", "waiting")?,
                next_attempt_at: r.try_get("", "next_at")?,
                in_flight: r.try_get::<Option<i64>>("", "in_flight")?.unwrap_or(0),
                owner: r.try_get("", "lease_owner")?,
                circuit: super::endpoints::circuit_of(r)?,
                failing_since: r.try_get("", "failing_since")?,
            })
        })
        .await?,
    )
}
