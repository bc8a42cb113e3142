//! A partner's notification channel: an email address, and a notification
//! URL, which is an endpoint of kind `notification` subscribed to
//! `endpoint.*` and signed with its own secret.

use sea_orm::{ConnectionTrait, DatabaseConnection, Value};

use super::{
    StoreError,
    endpoints::{EndpointStatus, Kind, NewEndpoint},
    partners::Partner,
    sql,
};
use crate::secret::{Secret, SecretBox};

/// Where a partner's notices go besides its endpoints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Channel {
    pub notification_email: Option<String>,
    /// The notification endpoint: its id and URL.
    pub notification_url: Option<(String, String)>,
}

/// What to do with the notification URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlChange {
    Keep,
    Remove,
    /// A URL already checked against the egress policy.
    Set(String),
}

async fn notification_endpoint(
    db: &impl ConnectionTrait,
    partner_id: &str,
) -> Result<Option<(String, String)>, StoreError> {
    let row = db
        .query_one_raw(sql(
            db.get_database_backend(),
            "SELECT id, url FROM endpoint WHERE partner_id = ? AND kind = ? ORDER BY created_at LIMIT 1",
            vec![partner_id.into(), Kind::Notification.as_str().into()],
        ))
        .await?;
    Ok(match row {
        Some(r) => Some((r.try_get("", "id")?, r.try_get("", "url")?)),
        None => None,
    })
}

/// The partner and its channel; `None` if there is no such partner.
pub async fn channel(
    db: &impl ConnectionTrait,
    partner_id: &str,
) -> Result<Option<(Partner, Channel)>, StoreError> {
    let Some(partner) = super::partners::find(db, partner_id).await? else {
        return Ok(None);
    };
    let channel = Channel {
        notification_email: partner.notification_email.clone(),
        notification_url: notification_endpoint(db, partner_id).await?,
    };
    Ok(Some((partner, channel)))
}

/// Changes the channel. `email`: `None` keeps it, `Some(None)` removes it.
/// Setting a URL where there was none creates the notification endpoint
/// and returns its secret (shown once); changing it keeps the secret.
pub async fn update(
    db: &DatabaseConnection,
    secrets: &SecretBox,
    partner_id: &str,
    email: Option<Option<String>>,
    url: UrlChange,
    concurrency: u32,
    now_ms: i64,
) -> Result<Option<(Partner, Channel, Option<Secret>)>, StoreError> {
    if super::partners::find(db, partner_id).await?.is_none() {
        return Ok(None);
    }
    let backend = db.get_database_backend();
    if let Some(email) = email {
        db.execute_raw(sql(
            backend,
            "UPDATE partner SET notification_email = ? WHERE id = ?",
            vec![Value::from(email), partner_id.into()],
        ))
        .await?;
    }
    let existing = notification_endpoint(db, partner_id).await?;
    let mut secret = None;
    match (url, existing) {
        (UrlChange::Keep, _) | (UrlChange::Remove, None) => {}
        (UrlChange::Remove, Some((id, _))) => {
            db.execute_raw(sql(
                backend,
                "DELETE FROM endpoint WHERE id = ? AND partner_id = ?",
                vec![id.into(), partner_id.into()],
            ))
            .await?;
        }
        (UrlChange::Set(url), Some((id, _))) => {
            db.execute_raw(sql(
                backend,
                "UPDATE endpoint SET url = ?, updated_at = ? WHERE id = ? AND partner_id = ?",
                vec![url.into(), now_ms.into(), id.into(), partner_id.into()],
            ))
            .await?;
        }
        (UrlChange::Set(url), None) => {
            let new = NewEndpoint {
                partner_id: partner_id.into(),
                url,
                description: "notification URL: this partner's endpoint notices".into(),
                event_types: vec!["endpoint.*".into(), "hookd.*".into()],
                schema_version: None,
                schema_versions: Default::default(),
                concurrency,
                rate_limit: None,
                ordering: Default::default(),
                on_dead: Default::default(),
                filter: None,
                status: EndpointStatus::Active,
            };
            let fresh = Secret::generate();
            super::endpoints::create_of_kind(db, secrets, new, Kind::Notification, &fresh, now_ms)
                .await?;
            secret = Some(fresh);
        }
    }
    let Some((partner, channel)) = channel(db, partner_id).await? else {
        return Ok(None);
    };
    Ok(Some((partner, channel, secret)))
}
