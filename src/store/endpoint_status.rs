//! Enabling and disabling an endpoint by hand, for its partner or an
//! operator (who acts through the owner's [`Scoped`] view). Disabling
//! pauses what the endpoint holds and announces `endpoint.disabled` to every
//! notification channel; enabling clears its failure history and resumes
//! its paused deliveries within the replay window. One transaction each,
//! guarded by the status it leaves, so a repeated call changes nothing.

use sea_orm::{ConnectionTrait, TransactionTrait, Value};
use serde_json::json;

use super::{
    StoreError,
    endpoints::{Endpoint, EndpointStatus},
    scoped::Scoped,
    sql,
};

/// What a status change did besides the status.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatusEffects {
    pub paused: u64,
    pub resumed: u64,
    /// Paused deliveries older than the replay window, now dead.
    pub dead: u64,
}

impl Scoped<'_> {
    /// Sets the status with `reason` (disabled and paused only), or `None`
    /// if the partner has no such endpoint.
    pub async fn set_status(
        &self,
        id: &str,
        status: EndpointStatus,
        reason: Option<&str>,
        now_ms: i64,
        resume_window_ms: i64,
    ) -> Result<Option<(Endpoint, StatusEffects)>, StoreError> {
        let backend = self.db.get_database_backend();
        let txn = self.db.begin().await?;
        let text = if status == EndpointStatus::Active {
            "UPDATE endpoint SET status = ?, disabled_reason = ?, failing_since = NULL, warned_at = NULL, updated_at = ? \
             WHERE id = ? AND partner_id = ? AND status <> ? RETURNING url"
        } else {
            "UPDATE endpoint SET status = ?, disabled_reason = ?, updated_at = ? \
             WHERE id = ? AND partner_id = ? AND status <> ? RETURNING url"
        };
        let values: Vec<Value> = vec![
            status.as_str().into(),
            Value::from(reason.map(str::to_string)),
            now_ms.into(),
            id.into(),
            self.partner_id.into(),
            status.as_str().into(),
        ];
        let changed = txn.query_one_raw(sql(backend, text, values)).await?;
        let mut effects = StatusEffects::default();
        if let Some(row) = changed {
            let url: String = row.try_get("", "url")?;
            if status == EndpointStatus::Active {
                (effects.resumed, effects.dead) =
                    super::paused::resume(&txn, id, now_ms, resume_window_ms).await?;
            } else {
                effects.paused = super::paused::pause(&txn, id, now_ms).await?;
            }
            if status == EndpointStatus::Disabled {
                let reason = reason.unwrap_or("disabled");
                let mut data = json!({"endpoint_id": id, "url": url, "reason": reason});
                data["last_error"] = super::health::last_error(&txn, id).await?;
                let event = super::health::operational(
                    self.partner_id.to_string(),
                    id,
                    "endpoint.disabled",
                    data,
                    now_ms,
                );
                super::outbox::insert(&txn, &[event], now_ms).await?;
            }
        }
        let endpoint = super::endpoints::find_for_partner(&txn, self.partner_id, id).await?;
        txn.commit().await?;
        Ok(endpoint.map(|e| (e, effects)))
    }
}
