//! Deliveries and attempts on the hot path: an endpoint's claim of its due
//! work, and the group commit of attempt outcomes.

use sea_orm::{ConnectionTrait, Value};

use super::{StoreError, placeholders, skip_locked, sql};
use crate::domain::{ids::new_id, outcome::ErrorCategory};

/// A delivery claimed by an endpoint actor: it is `delivering` until its
/// outcome is recorded or its lease ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub id: String,
    pub event_id: String,
    pub attempt_count: u32,
    pub created_at: i64,
}

/// Claims up to `limit` due deliveries of one endpoint, leased until `lease_until`.
pub async fn claim_due(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    now_ms: i64,
    lease_until: i64,
    limit: u32,
) -> Result<Vec<Claimed>, StoreError> {
    let backend = db.get_database_backend();
    let text = format!(
        "UPDATE delivery SET state = 'delivering', next_attempt_at = ?, updated_at = ? WHERE id IN (\
           SELECT id FROM delivery WHERE endpoint_id = ? AND state IN ('pending', 'failed', 'delivering') \
           AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?{}) \
         RETURNING id, event_id, attempt_count, created_at",
        skip_locked(backend)
    );
    let values = vec![
        lease_until.into(),
        now_ms.into(),
        endpoint_id.into(),
        now_ms.into(),
        i64::from(limit).into(),
    ];
    Ok(super::query_all(db, sql(backend, &text, values), |r| {
        Ok(Claimed {
            id: r.try_get("", "id")?,
            event_id: r.try_get("", "event_id")?,
            attempt_count: u32::try_from(r.try_get::<i32>("", "attempt_count")?).unwrap_or(0),
            created_at: r.try_get("", "created_at")?,
        })
    })
    .await?)
}

/// When this endpoint's earliest unfinished delivery is due, if it has one.
pub async fn next_due(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
) -> Result<Option<i64>, StoreError> {
    let row = db
        .query_one_raw(sql(
            db.get_database_backend(),
            "SELECT MIN(next_attempt_at) AS due FROM delivery WHERE endpoint_id = ? \
             AND state IN ('pending', 'failed', 'delivering')",
            vec![endpoint_id.into()],
        ))
        .await?;
    Ok(match row {
        Some(r) => r.try_get::<Option<i64>>("", "due")?,
        None => None,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Scheduled,
    Manual,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Scheduled => "scheduled",
            Trigger::Manual => "manual",
        }
    }
}

/// Where a delivery goes after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextState {
    Delivered,
    RetryAt(i64),
    Dead,
}

/// One attempt and the delivery's transition, written together.
#[derive(Debug, Clone)]
pub struct AttemptRecord {
    pub delivery_id: String,
    pub endpoint_id: String,
    pub attempt_no: u32,
    pub trigger: Trigger,
    pub started_at: i64,
    pub latency_ms: u32,
    pub status_code: Option<u16>,
    pub error: Option<(ErrorCategory, String)>,
    pub excerpt: Option<String>,
    pub remote_addr: Option<String>,
    pub next: NextState,
}

/// Writes a batch of attempts and their delivery transitions in one
/// transaction (the group commit), inside `txn`.
pub async fn record<C: ConnectionTrait>(
    txn: &C,
    batch: &[AttemptRecord],
    now_ms: i64,
) -> Result<(), StoreError> {
    let backend = txn.get_database_backend();
    for chunk in batch.chunks(200) {
        let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 11);
        for r in chunk {
            values.extend([
                new_id("att").into(),
                r.delivery_id.clone().into(),
                (r.attempt_no as i32).into(),
                r.trigger.as_str().into(),
                r.started_at.into(),
                Value::from(Some(r.latency_ms as i32)),
                Value::from(r.status_code.map(i32::from)),
                Value::from(r.error.as_ref().map(|e| e.0.as_str().to_string())),
                Value::from(r.error.as_ref().map(|e| e.1.clone())),
                Value::from(r.excerpt.clone()),
                Value::from(r.remote_addr.clone()),
            ]);
        }
        let tuples = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
        txn.execute_raw(sql(
            backend,
            &format!(
                "INSERT INTO attempt (id, delivery_id, attempt_no, trigger, started_at, latency_ms, status_code, \
                 error_category, error_detail, response_excerpt, remote_addr) VALUES {tuples}"
            ),
            values,
        ))
        .await?;

        let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 7);
        for r in chunk {
            let (state, next_at) = match r.next {
                NextState::Delivered => ("delivered", now_ms),
                NextState::RetryAt(at) => ("failed", at),
                NextState::Dead => ("dead", now_ms),
            };
            values.extend([
                r.delivery_id.clone().into(),
                state.into(),
                i64::from(r.attempt_no).into(),
                next_at.into(),
                Value::from(r.status_code.map(i64::from)),
                Value::from(Some(i64::from(r.latency_ms))),
                Value::from(r.error.as_ref().map(|e| e.0.as_str().to_string())),
            ]);
        }
        // VALUES columns are named column1… on both backends.
        let tuples = vec!["(?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
        txn.execute_raw(sql(
            backend,
            &format!(
                "UPDATE delivery SET state = v.column2, attempt_count = v.column3, next_attempt_at = v.column4, \
                 last_status = v.column5, last_latency_ms = v.column6, last_error_category = v.column7, updated_at = ? \
                 FROM (VALUES {tuples}) AS v WHERE delivery.id = v.column1"
            ),
            std::iter::once(Value::from(now_ms)).chain(values).collect(),
        ))
        .await?;
    }
    Ok(())
}

/// Marks claimed deliveries dead without an attempt (past their maximum age).
pub async fn expire(
    db: &sea_orm::DatabaseConnection,
    ids: &[String],
    now_ms: i64,
) -> Result<(), StoreError> {
    let mut values: Vec<Value> = vec![now_ms.into()];
    values.extend(ids.iter().map(|i| Value::from(i.clone())));
    db.execute_raw(sql(
        db.get_database_backend(),
        &format!(
            "UPDATE delivery SET state = 'dead', last_error_category = 'internal', updated_at = ? \
             WHERE state = 'delivering' AND id IN ({})",
            placeholders(ids.len())
        ),
        values,
    ))
    .await?;
    Ok(())
}

/// Returns claimed deliveries to the queue unattempted (an actor stopping, or
/// a circuit that opened while they waited), due at `due_at`.
pub async fn release(
    db: &sea_orm::DatabaseConnection,
    ids: &[String],
    due_at: i64,
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    let mut values: Vec<Value> = vec![due_at.into()];
    values.extend(ids.iter().map(|i| Value::from(i.clone())));
    db.execute_raw(sql(
        db.get_database_backend(),
        &format!(
            "UPDATE delivery SET state = CASE WHEN attempt_count = 0 THEN 'pending' ELSE 'failed' END, \
             next_attempt_at = ? WHERE state = 'delivering' AND id IN ({})",
            placeholders(ids.len())
        ),
        values,
    ))
    .await?;
    Ok(())
}
