//! Endpoint health as stored: when an endpoint started failing, the warning
//! after `warn_after`, disabling after `disable_after` or on 410, and
//! recovery, each announced to the partner as an operational event. Written
//! with each group commit and by the periodic health sweep; every transition
//! is an update guarded by the state it leaves, so it happens (and is
//! announced) once however many writers race for it. Only a partner's own
//! endpoints (kind `endpoint`) have a health: the notification endpoints
//! are never marked failing, so never warned about or disabled.

use sea_orm::{ConnectionTrait, Value};
use serde_json::json;

use super::{StoreError, sql};
pub use crate::domain::health::Thresholds;
use crate::domain::{
    event::{NewEvent, Subject, format_time},
    health::{Due, Standing},
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

/// What changed, for the caller to act on.
#[derive(Debug, Default, Clone)]
pub struct Changes {
    pub disabled: Vec<String>,
    pub events: Vec<NewEvent>,
}

pub(super) fn operational(
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
        schema_version: 1,
        payload: data.to_string(),
        correlation_id: None,
        renditions: Default::default(),
        trace: None,
    }
}

/// The endpoint's most recent failed attempt, as the notices show it
/// (the excerpt was redacted when it was stored); null if none failed.
pub(super) async fn last_error(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
) -> Result<serde_json::Value, StoreError> {
    let row = db
        .query_one_raw(sql(
            db.get_database_backend(),
            "SELECT a.error_category, a.status_code, a.response_excerpt, a.started_at \
             FROM attempt a JOIN delivery d ON d.id = a.delivery_id \
             WHERE d.endpoint_id = ? AND a.error_category IS NOT NULL \
             ORDER BY a.started_at DESC, a.id DESC LIMIT 1",
            vec![endpoint_id.into()],
        ))
        .await?;
    let Some(r) = row else {
        return Ok(serde_json::Value::Null);
    };
    let excerpt: Option<String> = r.try_get("", "response_excerpt")?;
    Ok(json!({
        "category": r.try_get::<String>("", "error_category")?,
        "status_code": r.try_get::<Option<i32>>("", "status_code")?,
        "excerpt": excerpt.map(|e| e.chars().take(EXCERPT_CHARS).collect::<String>()),
        "at": format_time(r.try_get::<i64>("", "started_at")?),
    }))
}

/// The most of an answer's excerpt a notice carries.
const EXCERPT_CHARS: usize = 300;

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
            db.execute_raw(sql(
                db.get_database_backend(),
                "UPDATE endpoint SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL",
                vec![id()],
            ))
            .await?;
            make_due(db, endpoint_id, Due::Recover, t, now_ms, out).await?;
        }
        Health::Gone => {
            let reason = "the receiver answered 410 Gone";
            let gone = Transition {
                endpoint_id,
                update: "UPDATE endpoint SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE id = ? AND status = 'active' AND kind = 'endpoint'",
                values: vec![reason.into(), now_ms.into(), id()],
                event_type: "endpoint.disabled",
            };
            if gone
                .make(
                    db,
                    now_ms,
                    out,
                    |url, _| json!({"endpoint_id": endpoint_id, "url": url, "reason": reason}),
                )
                .await?
            {
                super::paused::pause(db, endpoint_id, now_ms).await?;
                out.disabled.push(endpoint_id.into());
            }
        }
        Health::Failing => {
            db.execute_raw(sql(
                db.get_database_backend(),
                "UPDATE endpoint SET failing_since = ? WHERE id = ? AND failing_since IS NULL AND kind = 'endpoint'",
                vec![now_ms.into(), id()],
            ))
            .await?;
            if !make_due(db, endpoint_id, Due::Disable, t, now_ms, out).await? {
                make_due(db, endpoint_id, Due::Warn, t, now_ms, out).await?;
            }
        }
    }
    Ok(())
}

/// One guarded transition of an endpoint (an update whose condition is the
/// state it leaves) and the operational event that announces it.
struct Transition<'a> {
    endpoint_id: &'a str,
    update: &'a str,
    values: Vec<Value>,
    event_type: &'static str,
}

impl Transition<'_> {
    /// Makes the transition and, if this writer made it, queues its event
    /// with the data `data` gives from the row's url and failing-since;
    /// whether it did.
    async fn make(
        self,
        db: &impl ConnectionTrait,
        now_ms: i64,
        out: &mut Changes,
        data: impl FnOnce(String, Option<i64>) -> serde_json::Value,
    ) -> Result<bool, StoreError> {
        let Some((partner, url, since)) = changed(db, self.update, self.values).await? else {
            return Ok(false);
        };
        let mut data = data(url, since);
        if self.event_type != "endpoint.recovered" {
            data["last_error"] = last_error(db, self.endpoint_id).await?;
        }
        out.events.push(operational(
            partner,
            self.endpoint_id,
            self.event_type,
            data,
            now_ms,
        ));
        Ok(true)
    }
}

/// Makes the transition `due` if the endpoint is still in the state it
/// leaves (the update's condition re-checks the thresholds), and announces
/// it; whether this writer made it.
pub async fn make_due(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    due: Due,
    t: Thresholds,
    now_ms: i64,
    out: &mut Changes,
) -> Result<bool, StoreError> {
    let id = endpoint_id;
    let (update, values, event_type): (&str, Vec<Value>, _) = match due {
        Due::Disable => (
            "UPDATE endpoint SET status = 'disabled', disabled_reason = ?, updated_at = ? \
             WHERE id = ? AND status = 'active' AND failing_since <= ?",
            vec![
                "failing with no success for longer than endpoints.disable_after".into(),
                now_ms.into(),
                id.into(),
                now_ms.saturating_sub(t.disable_after_ms).into(),
            ],
            "endpoint.disabled",
        ),
        Due::Warn => (
            "UPDATE endpoint SET warned_at = ? WHERE id = ? AND warned_at IS NULL AND failing_since <= ?",
            vec![
                now_ms.into(),
                id.into(),
                now_ms.saturating_sub(t.warn_after_ms).into(),
            ],
            "endpoint.failing",
        ),
        Due::Recover => (
            "UPDATE endpoint SET warned_at = NULL WHERE id = ? AND failing_since IS NULL AND warned_at IS NOT NULL",
            vec![id.into()],
            "endpoint.recovered",
        ),
    };
    let data = |url: String, since: Option<i64>| {
        let since = since.map(format_time);
        match due {
            Due::Disable => json!({"endpoint_id": id, "url": url, "reason": "failing too long",
                                   "failing_since": since}),
            Due::Warn => json!({"endpoint_id": id, "url": url, "failing_since": since}),
            Due::Recover => json!({"endpoint_id": id, "url": url}),
        }
    };
    let transition = Transition {
        endpoint_id,
        update,
        values,
        event_type,
    };
    let made = transition.make(db, now_ms, out, data).await?;
    if made && due == Due::Disable {
        super::paused::pause(db, endpoint_id, now_ms).await?;
        out.disabled.push(endpoint_id.into());
    }
    Ok(made)
}

/// Active endpoints that may have a transition due at `now_ms`: failing since
/// before the shorter threshold, or warned and no longer failing. Oldest first.
pub async fn to_sweep(
    db: &impl ConnectionTrait,
    t: Thresholds,
    now_ms: i64,
) -> Result<Vec<(String, Standing)>, StoreError> {
    let rows = super::query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT id, failing_since, warned_at FROM endpoint WHERE status = 'active' \
             AND (failing_since <= ? OR (failing_since IS NULL AND warned_at IS NOT NULL)) \
             ORDER BY failing_since, id",
            vec![t.looked_at_before(now_ms).into()],
        ),
        |r| {
            let standing = Standing {
                failing_since_ms: r.try_get("", "failing_since")?,
                warned: r.try_get::<Option<i64>>("", "warned_at")?.is_some(),
            };
            Ok((r.try_get::<String>("", "id")?, standing))
        },
    )
    .await?;
    Ok(rows)
}
