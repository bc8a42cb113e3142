//! Retention: finished deliveries (with their attempts) and published
//! events past their age are deleted, in bounded batches. Unfinished
//! deliveries, deliveries with a replay still waiting (a partner asked for
//! it; it goes when the endpoint takes it, however long that is), and events
//! that still have deliveries, are kept.
//! Expired dashboard sessions, and conformance checks older than the
//! deliveries' retention, go in the same sweep.

use sea_orm::{ConnectionTrait, Value};

use super::{StoreError, sql};

const BATCH: i64 = 1000;

/// Deletes one batch of each; returns (deliveries, events) deleted.
pub async fn sweep(
    db: &impl ConnectionTrait,
    now_ms: i64,
    deliveries_age_ms: i64,
    events_age_ms: i64,
) -> Result<(u64, u64), StoreError> {
    let backend = db.get_database_backend();
    let deliveries = db
        .execute_raw(sql(
            backend,
            "DELETE FROM delivery WHERE id IN (SELECT d.id FROM delivery d \
             WHERE d.state IN ('delivered', 'dead', 'cancelled', 'skipped') AND d.updated_at < ? AND d.holding = 0 \
             AND NOT EXISTS (SELECT 1 FROM replay r WHERE r.delivery_id = d.id) LIMIT ?)",
            vec![Value::from(now_ms - deliveries_age_ms), BATCH.into()],
        ))
        .await?
        .rows_affected();
    let events = db
        .execute_raw(sql(
            backend,
            "DELETE FROM outbox_event WHERE event_id IN (SELECT o.event_id FROM outbox_event o \
             WHERE o.published_at IS NOT NULL AND o.published_at < ? \
             AND NOT EXISTS (SELECT 1 FROM delivery d WHERE d.event_id = o.event_id) LIMIT ?)",
            vec![Value::from(now_ms - events_age_ms), BATCH.into()],
        ))
        .await?
        .rows_affected();
    // Stored conformance checks are kept as long as deliveries.
    db.execute_raw(sql(
        backend,
        "DELETE FROM receiver_check WHERE id IN (SELECT id FROM receiver_check \
         WHERE created_at < ? LIMIT ?)",
        vec![Value::from(now_ms - deliveries_age_ms), BATCH.into()],
    ))
    .await?;
    super::sessions::sweep(db, now_ms).await?;
    Ok((deliveries, events))
}
