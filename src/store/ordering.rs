//! The order of an ordered endpoint's subjects, kept in the database. A
//! subject's head is due like any delivery; the deliveries behind it are
//! `waiting`. Whenever a head stops holding its subject up (delivered, dead
//! without holding, cancelled, skipped), the earliest waiting delivery of
//! the subject becomes due, in the same transaction; a sweep does the same
//! for any subject left with nothing ahead of its waiting deliveries.
//!
//! Publishers place new deliveries under the feed counter's lock, so a
//! subject's deliveries are placed in feed order, and on PostgreSQL they lock
//! the rows under way of the subjects they place: a head that finishes at
//! that moment either sees the new waiting delivery or is seen finished.

use std::collections::{BTreeMap, HashSet};

use sea_orm::{ConnectionTrait, DbBackend, Value};

use super::{StoreError, claimed::Claimed, placeholders, sql};

/// The states of a subject's rows that can hold it up, word for word as
/// the partial index `delivery_subject` names them (so both databases use it).
const SUBJECT_STATES: &str =
    "state IN ('waiting', 'pending', 'failed', 'delivering', 'paused', 'dead')";

/// `holding` for a delivery that dies now: set when its endpoint orders by
/// subject and holds a subject whose head died.
pub const HOLD_IF_ORDERED: &str = "CASE WHEN delivery.ordering_key IS NOT NULL AND EXISTS \
     (SELECT 1 FROM endpoint e WHERE e.id = delivery.endpoint_id AND e.ordering = 'subject' \
     AND e.ordering_on_dead = 'hold') THEN 1 ELSE 0 END";

/// A subject of one endpoint: (endpoint id, subject key).
pub type Subject = (String, String);

/// The subjects among `subjects` that already have a delivery waiting or
/// under way (or a dead head that holds them). Inside the publishing
/// transaction, after the feed counter is taken.
pub async fn busy(
    txn: &impl ConnectionTrait,
    subjects: &[Subject],
) -> Result<HashSet<Subject>, StoreError> {
    let backend = txn.get_database_backend();
    let mut endpoints: Vec<&str> = subjects.iter().map(|(e, _)| e.as_str()).collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    let mut keys: Vec<&str> = subjects.iter().map(|(_, k)| k.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    let wanted: HashSet<(&str, &str)> = subjects
        .iter()
        .map(|(e, k)| (e.as_str(), k.as_str()))
        .collect();
    let mut found = HashSet::new();
    // One statement per chunk of subjects across every endpoint, so that
    // the rows are locked in one order (by id), as the recorder locks them.
    for chunk in keys.chunks(1000) {
        let mut values: Vec<Value> = endpoints.iter().map(|e| Value::from(*e)).collect();
        values.extend(chunk.iter().map(|k| Value::from(*k)));
        let scope = format!(
            "endpoint_id IN ({}) AND ordering_key IN ({}) AND {SUBJECT_STATES} \
             AND (state <> 'dead' OR holding = 1)",
            placeholders(endpoints.len()),
            placeholders(chunk.len())
        );
        if backend == DbBackend::Postgres {
            // Wait for a head being recorded right now: once it commits,
            // the next statement sees whether it still holds its subject
            // (and that commit's advance saw nothing of ours).
            txn.execute_raw(sql(
                backend,
                &format!(
                    "SELECT id FROM delivery WHERE {scope} AND state <> 'waiting' ORDER BY id FOR UPDATE"
                ),
                values.clone(),
            ))
            .await?;
        }
        let rows = super::query_all(
            txn,
            sql(
                backend,
                &format!("SELECT DISTINCT endpoint_id, ordering_key FROM delivery WHERE {scope}"),
                values,
            ),
            |r| {
                Ok((
                    r.try_get::<String>("", "endpoint_id")?,
                    r.try_get::<String>("", "ordering_key")?,
                ))
            },
        )
        .await?;
        found.extend(
            rows.into_iter()
                .filter(|(e, k)| wanted.contains(&(e.as_str(), k.as_str()))),
        );
    }
    Ok(found)
}

/// Makes the earliest waiting delivery of each of `subjects` due at `now`,
/// where nothing holds the subject up any more. Returns how many.
pub async fn advance(
    db: &impl ConnectionTrait,
    subjects: &[Subject],
    now_ms: i64,
) -> Result<u64, StoreError> {
    let moved = advance_as(db, subjects, now_ms, Promote::Due).await?;
    Ok(moved.len() as u64)
}

/// Like `advance`, but each delivery moved is claimed at once until
/// `lease_until` (for the instance that holds its endpoint, inside the
/// transaction that closed its head): its actor sends it without a claim.
/// Returns each with its subject.
pub async fn advance_claiming(
    db: &impl ConnectionTrait,
    subjects: &[Subject],
    now_ms: i64,
    lease_until: i64,
) -> Result<Vec<(Subject, Claimed)>, StoreError> {
    advance_as(db, subjects, now_ms, Promote::ClaimedUntil(lease_until)).await
}

async fn advance_as(
    db: &impl ConnectionTrait,
    subjects: &[Subject],
    now_ms: i64,
    how: Promote,
) -> Result<Vec<(Subject, Claimed)>, StoreError> {
    let mut moved = Vec::new();
    for (endpoint, keys) in by_endpoint(subjects) {
        for chunk in keys.chunks(500) {
            moved.extend(promote_first(db, endpoint, chunk, now_ms, how).await?);
        }
    }
    Ok(moved)
}

/// Advances every subject of `endpoint_id` that nothing holds up.
pub async fn advance_endpoint(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    now_ms: i64,
) -> Result<u64, StoreError> {
    let scope = vec![endpoint_id.into()];
    let moved = promote(
        db,
        "AND w.endpoint_id = ?",
        scope,
        now_ms,
        10_000,
        Promote::Due,
    )
    .await?;
    Ok(moved.len() as u64)
}

/// The sweep: advances up to `limit` subjects, of any endpoint, whose
/// waiting deliveries have nothing ahead of them (a transition that did not
/// advance its subject, such as a paused delivery dying of age).
pub async fn advance_stalled(
    db: &impl ConnectionTrait,
    now_ms: i64,
    limit: usize,
) -> Result<u64, StoreError> {
    let moved = promote(db, "", Vec::new(), now_ms, limit, Promote::Due).await?;
    Ok(moved.len() as u64)
}

/// Promotes, for each of `keys` of `endpoint`, the subject's first row in
/// feed order that can hold it up, when it is waiting and nothing else
/// holds the subject up: one look at each subject's own rows, however many
/// wait behind.
async fn promote_first(
    db: &impl ConnectionTrait,
    endpoint: &str,
    keys: &[&str],
    now_ms: i64,
    how: Promote,
) -> Result<Vec<(Subject, Claimed)>, StoreError> {
    let (state, at, claims) = how.sets(now_ms);
    let text = format!(
        "UPDATE delivery SET state = ?, next_attempt_at = ?, updated_at = ?, claim_seq = claim_seq + ? \
         WHERE state = 'waiting' AND id IN (\
           SELECT (SELECT f.id FROM delivery f WHERE f.endpoint_id = ? AND f.ordering_key = v.column1 \
             AND f.{SUBJECT_STATES} AND (f.state <> 'dead' OR f.holding = 1) \
             ORDER BY f.ordering_seq LIMIT 1) \
           FROM (VALUES {}) AS v \
           WHERE NOT EXISTS (SELECT 1 FROM delivery o WHERE o.endpoint_id = ? \
             AND o.ordering_key = v.column1 AND o.{SUBJECT_STATES} AND o.state <> 'waiting' \
             AND (o.state <> 'dead' OR o.holding = 1))) \
         RETURNING {}, endpoint_id",
        vec!["(?)"; keys.len()].join(", "),
        super::claimed::CLAIMED_COLUMNS
    );
    let mut values: Vec<Value> = vec![state.into(), at.into(), now_ms.into(), Value::from(claims)];
    values.push(endpoint.into());
    values.extend(keys.iter().map(|k| Value::from(*k)));
    values.push(endpoint.into());
    returned(db, &text, values, at).await
}

/// The rows a promotion returned, each with its subject.
async fn returned(
    db: &impl ConnectionTrait,
    text: &str,
    values: Vec<Value>,
    lease_until: i64,
) -> Result<Vec<(Subject, Claimed)>, StoreError> {
    super::query_all(db, sql(db.get_database_backend(), text, values), |r| {
        let claimed = super::claimed::claimed_row(r, lease_until)?;
        let endpoint: String = r.try_get("", "endpoint_id")?;
        let key: String = r.try_get("", "ordering_key")?;
        Ok(((endpoint, key), claimed))
    })
    .await
    .map_err(Into::into)
}

/// How a promotion leaves the deliveries it moves.
#[derive(Debug, Clone, Copy)]
enum Promote {
    /// Due now, for whoever claims next.
    Due,
    /// Claimed (a new claim number), leased until then.
    ClaimedUntil(i64),
}

impl Promote {
    /// (state, next_attempt_at, claim number increment).
    fn sets(self, now_ms: i64) -> (&'static str, i64, i64) {
        match self {
            Promote::Due => ("pending", now_ms, 0),
            Promote::ClaimedUntil(until) => ("delivering", until, 1),
        }
    }
}

async fn promote(
    db: &impl ConnectionTrait,
    within: &str,
    scope: Vec<Value>,
    now_ms: i64,
    limit: usize,
    how: Promote,
) -> Result<Vec<(Subject, Claimed)>, StoreError> {
    // SQLite would otherwise walk every waiting row of the endpoint by
    // (endpoint, state): `+` keeps the state out of index choice, so the
    // subjects' own rows are read (`delivery_subject`).
    let waiting = match db.get_database_backend() {
        DbBackend::Sqlite => "+w.state = 'waiting'",
        _ => "w.state = 'waiting'",
    };
    let (state, at, claims) = how.sets(now_ms);
    let text = format!(
        "UPDATE delivery SET state = ?, next_attempt_at = ?, updated_at = ?, claim_seq = claim_seq + ? \
         WHERE state = 'waiting' AND id IN (\
           SELECT w.id FROM delivery w WHERE w.{SUBJECT_STATES} AND {waiting} {within} \
           AND NOT EXISTS (SELECT 1 FROM delivery o WHERE o.endpoint_id = w.endpoint_id \
             AND o.ordering_key = w.ordering_key AND o.{SUBJECT_STATES} \
             AND (o.state <> 'dead' OR o.holding = 1) \
             AND (o.state <> 'waiting' OR o.ordering_seq < w.ordering_seq)) \
           LIMIT ?) RETURNING {}, endpoint_id",
        super::claimed::CLAIMED_COLUMNS
    );
    let mut values: Vec<Value> = vec![state.into(), at.into(), now_ms.into(), Value::from(claims)];
    values.extend(scope);
    values.push((limit as i64).into());
    returned(db, &text, values, at).await
}

/// The endpoint stopped ordering (every waiting delivery is due now), or
/// stopped holding subjects on a dead head (its dead heads let go).
pub async fn settings_changed(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    ordered: bool,
    holds: bool,
    now_ms: i64,
) -> Result<(), StoreError> {
    let backend = db.get_database_backend();
    if !ordered {
        db.execute_raw(sql(
            backend,
            "UPDATE delivery SET state = 'pending', next_attempt_at = ?, updated_at = ? \
             WHERE endpoint_id = ? AND state = 'waiting'",
            vec![now_ms.into(), now_ms.into(), endpoint_id.into()],
        ))
        .await?;
    }
    if !ordered || !holds {
        db.execute_raw(sql(
            backend,
            "UPDATE delivery SET holding = 0 WHERE endpoint_id = ? AND holding = 1",
            vec![endpoint_id.into()],
        ))
        .await?;
        advance_endpoint(db, endpoint_id, now_ms).await?;
    }
    Ok(())
}

/// Lets a dead head that holds its subject go (the partner or an operator
/// skipped it): it stays dead, and recoverable; the subject moves on.
/// `None` when `delivery_id` of `endpoint_id` holds nothing.
pub async fn skip(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    delivery_id: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let key: Option<String> = db
        .query_one_raw(sql(
            db.get_database_backend(),
            "UPDATE delivery SET holding = 0, updated_at = ? \
             WHERE id = ? AND endpoint_id = ? AND state = 'dead' AND holding = 1 RETURNING ordering_key",
            vec![now_ms.into(), delivery_id.into(), endpoint_id.into()],
        ))
        .await?
        .map(|r| r.try_get::<Option<String>>("", "ordering_key"))
        .transpose()?
        .flatten();
    let Some(key) = key else {
        return Ok(false);
    };
    advance(db, &[(endpoint_id.to_string(), key)], now_ms).await?;
    Ok(true)
}

/// A subject held up behind its head, as the partner and the operator see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldSubject {
    pub subject_type: String,
    pub subject_id: String,
    /// The head: the delivery everything behind it waits for.
    pub delivery_id: String,
    pub event_id: String,
    pub event_type: String,
    /// `dead` (holding: replay or skip it), `failed` (retrying), `paused`
    /// (the endpoint is not active), `pending` or `delivering`.
    pub state: String,
    pub attempt_count: i32,
    /// When the head is next attempted (for a retrying head).
    pub next_attempt_at: i64,
    pub last_error_category: Option<String>,
    /// When the head last changed.
    pub since: i64,
    /// Deliveries of the subject waiting behind the head.
    pub waiting: i64,
}

/// The subjects of `endpoint_id` held up behind their heads: a dead head
/// that holds, or a head with deliveries waiting behind it, oldest change
/// first, at most `limit`.
pub async fn held(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    limit: u32,
) -> Result<Vec<HeldSubject>, StoreError> {
    let text = format!(
        "SELECT h.id, h.event_id, h.state, h.attempt_count, h.next_attempt_at, h.last_error_category, \
         h.updated_at, e.type, e.subject_type, e.subject_id, \
         (SELECT COUNT(*) FROM delivery w WHERE w.endpoint_id = h.endpoint_id \
           AND w.ordering_key = h.ordering_key AND w.{SUBJECT_STATES} AND w.state = 'waiting') AS waiting \
         FROM delivery h JOIN outbox_event e ON e.event_id = h.event_id \
         WHERE h.endpoint_id = ? AND h.ordering_key IS NOT NULL AND h.{SUBJECT_STATES} \
         AND h.state <> 'waiting' AND (h.state <> 'dead' OR h.holding = 1) \
         ORDER BY h.updated_at, h.id"
    );
    let rows = super::query_all(
        db,
        sql(db.get_database_backend(), &text, vec![endpoint_id.into()]),
        |r| {
            Ok(HeldSubject {
                subject_type: r
                    .try_get::<Option<String>>("", "subject_type")?
                    .unwrap_or_default(),
                subject_id: r
                    .try_get::<Option<String>>("", "subject_id")?
                    .unwrap_or_default(),
                delivery_id: r.try_get("", "id")?,
                event_id: r.try_get("", "event_id")?,
                event_type: r.try_get("", "type")?,
                state: r.try_get("", "state")?,
                attempt_count: r.try_get("", "attempt_count")?,
                next_attempt_at: r.try_get("", "next_attempt_at")?,
                last_error_category: r.try_get("", "last_error_category")?,
                since: r.try_get("", "updated_at")?,
                waiting: r.try_get("", "waiting")?,
            })
        },
    )
    .await?;
    Ok(rows
        .into_iter()
        .filter(|h| h.state == "dead" || h.waiting > 0)
        .take(limit as usize)
        .collect())
}

fn by_endpoint(subjects: &[Subject]) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (endpoint, key) in subjects {
        out.entry(endpoint.as_str()).or_default().push(key.as_str());
    }
    for keys in out.values_mut() {
        keys.sort_unstable();
        keys.dedup();
    }
    out
}
