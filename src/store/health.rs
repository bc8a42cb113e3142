//! Endpoint health written with each group commit: when an endpoint started
//! failing, the warning after `warn_after`, disabling after `disable_after` or
//! on 410, and recovery, each announced to the partner as an operational event.

use sea_orm::{ConnectionTrait, Value};
use serde_json::json;

use super::{StoreError, sql};
use crate::domain::{
    event::{NewEvent, Subject, format_time},
    ids::EventId,
};

/// What a batch of attempts says about one endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// The latest attempt in the batch succeeded.
    Succeeded,
    /// Attempts failed (none succeeded after them).
    Failing,
    /// The receiver answered 410 Gone.
    Gone,
}

/// Thresholds in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    pub warn_after_ms: i64,
    pub disable_after_ms: i64,
}

/// What changed, for the caller to act on.
#[derive(Debug, Default, Clone)]
pub struct Changes {
    pub disabled: Vec<String>,
    pub events: Vec<NewEvent>,
}

fn operational(
    partner_id: String,
    endpoint_id: &str,
    event_type: &str,
    data: serde_json::Value,
    now_ms: i64,
) -> NewEvent {
    NewEvent {
        id: EventId::generate(),
        event_type: event_type.into(),
        partner_id,
        subject: Some(Subject {
            subject_type: "endpoint".into(),
            id: endpoint_id.into(),
            version: None,
        }),
        occurred_at_ms: now_ms,
        occurred_at_given: true,
        schema_version: "1".into(),
        payload: data.to_string(),
        correlation_id: None,
    }
}

/// Runs `text` and returns `(partner_id, url, failing_since)` of the row it changed, if any.
async fn changed(
    db: &impl ConnectionTrait,
    text: &str,
    values: Vec<Value>,
) -> Result<Option<(String, String, Option<i64>)>, StoreError> {
    let row = db
        .query_one_raw(sql(
            db.get_database_backend(),
            &format!("{text} RETURNING partner_id, url, failing_since"),
            values,
        ))
        .await?;
    Ok(match row {
        Some(r) => Some((
            r.try_get("", "partner_id")?,
            r.try_get("", "url")?,
            r.try_get("", "failing_since")?,
        )),
        None => None,
    })
}

/// Which of these endpoints are marked failing (or warned about).
pub async fn failing_among(
    db: &impl ConnectionTrait,
    endpoint_ids: &[&str],
) -> Result<std::collections::HashSet<String>, StoreError> {
    if endpoint_ids.is_empty() {
        return Ok(Default::default());
    }
    let rows = super::query_all(
        db,
        sql(
            db.get_database_backend(),
            &format!(
                "SELECT id FROM endpoint WHERE id IN ({}) AND (failing_since IS NOT NULL OR warned_at IS NOT NULL)",
                super::placeholders(endpoint_ids.len())
            ),
            endpoint_ids.iter().map(|e| Value::from(*e)).collect(),
        ),
        |r| r.try_get::<String>("", "id"),
    )
    .await?;
    Ok(rows.into_iter().collect())
}

/// Applies one endpoint's health from a batch, inside the batch's transaction.
pub async fn apply(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    health: Health,
    t: Thresholds,
    now_ms: i64,
    out: &mut Changes,
) -> Result<(), StoreError> {
    let id = || Value::from(endpoint_id);
    match health {
        Health::Succeeded => {
            let recovered = changed(
                db,
                "UPDATE endpoint SET failing_since = NULL, warned_at = NULL WHERE id = ? AND warned_at IS NOT NULL",
                vec![id()],
            )
            .await?;
            if let Some((partner, url, _)) = recovered {
                out.events.push(operational(
                    partner,
                    endpoint_id,
                    "endpoint.recovered",
                    json!({"endpoint_id": endpoint_id, "url": url}),
                    now_ms,
                ));
            }
            db.execute_raw(sql(
                db.get_database_backend(),
                "UPDATE endpoint SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL",
                vec![id()],
            ))
            .await?;
        }
        Health::Gone => {
            let reason = "the receiver answered 410 Gone";
            if let Some((partner, url, _)) = changed(
                db,
                "UPDATE endpoint SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE id = ? AND status = 'active'",
                vec![reason.into(), now_ms.into(), id()],
            )
            .await?
            {
                out.disabled.push(endpoint_id.into());
                out.events.push(operational(partner, endpoint_id, "endpoint.disabled", json!({"endpoint_id": endpoint_id, "url": url, "reason": reason}), now_ms));
            }
        }
        Health::Failing => {
            db.execute_raw(sql(
                db.get_database_backend(),
                "UPDATE endpoint SET failing_since = ? WHERE id = ? AND failing_since IS NULL",
                vec![now_ms.into(), id()],
            ))
            .await?;
            let disabled = changed(
                db,
                "UPDATE endpoint SET status = 'disabled', disabled_reason = ?, updated_at = ? \
                 WHERE id = ? AND status = 'active' AND failing_since <= ?",
                vec![
                    "failing with no success for longer than endpoints.disable_after".into(),
                    now_ms.into(),
                    id(),
                    (now_ms - t.disable_after_ms).into(),
                ],
            )
            .await?;
            if let Some((partner, url, since)) = disabled {
                out.disabled.push(endpoint_id.into());
                let data = json!({"endpoint_id": endpoint_id, "url": url, "reason": "failing too long",
                                  "failing_since": since.map(format_time)});
                out.events.push(operational(
                    partner,
                    endpoint_id,
                    "endpoint.disabled",
                    data,
                    now_ms,
                ));
                return Ok(());
            }
            let warned = changed(
                db,
                "UPDATE endpoint SET warned_at = ? WHERE id = ? AND warned_at IS NULL AND failing_since <= ?",
                vec![now_ms.into(), id(), (now_ms - t.warn_after_ms).into()],
            )
            .await?;
            if let Some((partner, url, since)) = warned {
                let data = json!({"endpoint_id": endpoint_id, "url": url, "failing_since": since.map(format_time)});
                out.events.push(operational(
                    partner,
                    endpoint_id,
                    "endpoint.failing",
                    data,
                    now_ms,
                ));
            }
        }
    }
    Ok(())
}
