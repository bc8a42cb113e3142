//! Deliveries held by an endpoint that is not active are `paused`: they are
//! not waiting for a retry, so no gauge counts them as waiting. Enabling the
//! endpoint resumes those within the replay window at once; a paused
//! delivery past its maximum age is dead.

use sea_orm::{ConnectionTrait, Value};

use super::{StoreError, ordering::HOLD_IF_ORDERED, sql};

/// Why a delivery that stayed paused past its maximum age is dead.
pub const PAST_MAX_AGE: &str = "paused-past-max-age";
/// Why a paused delivery older than the replay window is dead on enabling.
pub const PAST_REPLAY_WINDOW: &str = "paused-past-replay-window";

/// Pauses what the endpoint holds: pending, failed and in-flight
/// deliveries (an attempt in flight still records its result; a retry it
/// asks for stays paused). Returns how many.
pub async fn pause(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    now_ms: i64,
) -> Result<u64, StoreError> {
    Ok(db
        .execute_raw(sql(
            db.get_database_backend(),
            "UPDATE delivery SET state = 'paused', updated_at = ? \
             WHERE endpoint_id = ? AND state IN ('pending', 'failed', 'delivering')",
            vec![now_ms.into(), endpoint_id.into()],
        ))
        .await?
        .rows_affected())
}

/// Resumes the endpoint's paused deliveries created within `window_ms`:
/// each is due now. Older ones are dead. Returns (resumed, dead).
pub async fn resume(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    now_ms: i64,
    window_ms: i64,
) -> Result<(u64, u64), StoreError> {
    let backend = db.get_database_backend();
    let oldest = now_ms.saturating_sub(window_ms);
    let dead = db
        .execute_raw(sql(
            backend,
            &format!(
                "UPDATE delivery SET state = 'dead', reason = ?, updated_at = ?, holding = {HOLD_IF_ORDERED} \
                 WHERE endpoint_id = ? AND state = 'paused' AND created_at < ?"
            ),
            vec![
                PAST_REPLAY_WINDOW.into(),
                now_ms.into(),
                endpoint_id.into(),
                oldest.into(),
            ],
        ))
        .await?
        .rows_affected();
    let resumed = db
        .execute_raw(sql(
            backend,
            "UPDATE delivery SET state = CASE WHEN attempt_count = 0 THEN 'pending' ELSE 'failed' END, \
             next_attempt_at = ?, updated_at = ? WHERE endpoint_id = ? AND state = 'paused'",
            vec![now_ms.into(), now_ms.into(), endpoint_id.into()],
        ))
        .await?
        .rows_affected();
    if dead > 0 {
        // Heads that died here let their subjects move on (unless they hold).
        super::ordering::advance_endpoint(db, endpoint_id, now_ms).await?;
    }
    Ok((resumed, dead))
}

/// Paused deliveries whose event is older than `max_age_ms` (the delivery
/// window) are dead; returns how many
/// (at most one bounded batch).
pub async fn expire(
    db: &impl ConnectionTrait,
    now_ms: i64,
    max_age_ms: i64,
) -> Result<u64, StoreError> {
    Ok(db
        .execute_raw(sql(
            db.get_database_backend(),
            &format!(
                "UPDATE delivery SET state = 'dead', reason = ?, updated_at = ?, holding = {HOLD_IF_ORDERED} WHERE id IN \
                 (SELECT id FROM delivery WHERE endpoint_id IN (SELECT id FROM endpoint WHERE status <> 'active') \
                 AND state = 'paused' AND COALESCE((SELECT o.created_at FROM outbox_event o \
                 WHERE o.event_id = delivery.event_id), delivery.created_at) < ? LIMIT 1000)"
            ),
            vec![
                Value::from(PAST_MAX_AGE),
                now_ms.into(),
                now_ms.saturating_sub(max_age_ms).into(),
            ],
        ))
        .await?
        .rows_affected())
}
