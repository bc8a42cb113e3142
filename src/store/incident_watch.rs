//! What the incident sweep observes, read across partners: each partner's
//! oldest overdue delivery on endpoints whose delays are hookd's own (not
//! failing, no open circuit, no rate limit of the partner's choosing), the
//! partners with deliveries due while the database was unreachable, and
//! one partner's count of delayed events for an incident's range.

use std::collections::HashMap;

use sea_orm::ConnectionTrait;

use super::{StoreError, query_all, sql};
use crate::notify::OPERATOR_PARTNER;

/// The deliveries that wait on hookd alone: unfinished (pending, failed
/// and waiting to retry, or claimed by an endpoint actor) on an active
/// endpoint that is not failing, has no open circuit and no rate limit.
const WAITING_ON_HOOKD: &str = "d.state IN ('pending', 'failed', 'delivering') \
     AND e.status = 'active' AND e.failing_since IS NULL AND e.rate_limit IS NULL \
     AND (e.circuit_open_until IS NULL OR e.circuit_open_until <= ?) AND e.partner_id <> ?";

/// When a delivery became due: its next attempt's time, or for one claimed
/// (whose `next_attempt_at` is its claim's lease) its creation if it was
/// never attempted, else the claim. A claimed delivery waits in its
/// actor's queue until sent, so a long queue shows here.
const DUE_AT: &str = "CASE WHEN d.state = 'delivering' THEN \
     (CASE WHEN d.attempt_count = 0 THEN d.created_at ELSE d.updated_at END) \
     ELSE d.next_attempt_at END";

/// Each partner's oldest due time among its deliveries that wait on hookd
/// and were due at `due_before` or earlier (none: nothing of its waits).
pub async fn overdue(
    db: &impl ConnectionTrait,
    now_ms: i64,
    due_before: i64,
) -> Result<HashMap<String, i64>, StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            &format!(
                "SELECT e.partner_id, MIN({DUE_AT}) AS oldest \
                 FROM delivery d JOIN endpoint e ON e.id = d.endpoint_id \
                 WHERE {WAITING_ON_HOOKD} AND {DUE_AT} <= ? GROUP BY e.partner_id"
            ),
            vec![now_ms.into(), OPERATOR_PARTNER.into(), due_before.into()],
        ),
        |r| Ok((r.try_get("", "partner_id")?, r.try_get("", "oldest")?)),
    )
    .await?;
    Ok(rows.into_iter().collect())
}

/// The partners with a delivery due while the database was unreachable,
/// from `since` until `back`: one still waiting that was due before `back`
/// (claimed ones too, dated as [`DUE_AT`] dates them: an actor may have
/// claimed it and not yet sent it),
/// or one created before `back` and attempted since `since` (nothing can
/// be recorded meanwhile, so those attempts came once it was back).
pub async fn due_during(
    db: &impl ConnectionTrait,
    since: i64,
    back: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(query_all(
        db,
        sql(
            db.get_database_backend(),
            &format!(
                "SELECT DISTINCT e.partner_id FROM delivery d JOIN endpoint e ON e.id = d.endpoint_id \
                 WHERE e.partner_id <> ? AND d.created_at < ? AND (\
                   (d.state IN ('pending', 'failed', 'delivering') AND {DUE_AT} < ?) \
                   OR EXISTS (SELECT 1 FROM attempt a WHERE a.delivery_id = d.id AND a.started_at >= ?)) \
                 ORDER BY e.partner_id"
            ),
            vec![
                OPERATOR_PARTNER.into(),
                back.into(),
                back.into(),
                since.into(),
            ],
        ),
        |r| r.try_get("", "partner_id"),
    )
    .await?)
}

/// How many of the partner's events were delayed by an incident from
/// `started_at` to `resolved_at`: events (hookd's own notices aside) with a
/// delivery created before `resolved_at` that was attempted inside the
/// range or still waits with its due time inside it.
pub async fn delayed_events(
    db: &impl ConnectionTrait,
    partner_id: &str,
    started_at: i64,
    resolved_at: i64,
) -> Result<i64, StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT COUNT(DISTINCT d.event_id) AS n FROM delivery d \
             JOIN endpoint e ON e.id = d.endpoint_id JOIN outbox_event o ON o.event_id = d.event_id \
             WHERE e.partner_id = ? AND o.type NOT LIKE 'hookd.%' AND d.created_at < ? AND (\
               EXISTS (SELECT 1 FROM attempt a WHERE a.delivery_id = d.id \
                 AND a.started_at >= ? AND a.started_at <= ?) \
               OR (d.state IN ('pending', 'failed', 'delivering') AND d.next_attempt_at <= ?))",
            vec![
                partner_id.into(),
                resolved_at.into(),
                started_at.into(),
                resolved_at.into(),
                resolved_at.into(),
            ],
        ),
        |r| r.try_get("", "n"),
    )
    .await?;
    Ok(rows.into_iter().next().unwrap_or(0))
}
