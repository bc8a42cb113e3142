//! An endpoint's receiver credentials (`endpoint_auth`): static headers,
//! OAuth2 client credentials and a client certificate. Secret parts are
//! sealed under the endpoint id and the field they belong to, so a sealed
//! value copied to another row or column does not open. Writes go through
//! `Scoped` (the partner's own endpoints only); the delivery path reads by
//! endpoint id.

use sea_orm::{ConnectionTrait, EntityTrait, Value};

use super::{StoreError, entity::endpoint_auth, sql};
use crate::{domain::client_cert::due_warning, secret::SecretBox};

/// OAuth2 client credentials, as the token request needs them.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuth2Client {
    pub token_url: String,
    pub client_id: String,
    pub client_secret: String,
    pub scope: Option<String>,
    pub audience: Option<String>,
}

impl std::fmt::Debug for OAuth2Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth2Client")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .finish()
    }
}

/// Everything an attempt presents, opened (the delivery path only).
#[derive(Default)]
pub struct Credentials {
    pub headers: Vec<(String, String)>,
    pub oauth2: Option<OAuth2Client>,
    /// The certificate chain PEM and the private key PEM.
    pub client_cert: Option<(String, Vec<u8>)>,
}

/// What is shown of an endpoint's credentials: nothing secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shown {
    pub header_names: Vec<String>,
    /// Token URL, client id, scope, audience.
    pub oauth2: Option<(String, String, Option<String>, Option<String>)>,
    /// Subject and expiry (ms).
    pub client_cert: Option<(String, i64)>,
}

fn context(endpoint_id: &str, field: &str) -> String {
    format!("{endpoint_id}/{field}")
}

const HEADERS: &str = "headers";
const OAUTH2: &str = "oauth2-client-secret";
const CLIENT_KEY: &str = "client-key";

/// The endpoint's credentials for an attempt; empty when none are set.
pub async fn for_delivery(
    db: &impl ConnectionTrait,
    secrets: &SecretBox,
    endpoint_id: &str,
) -> Result<Credentials, StoreError> {
    let Some(row) = endpoint_auth::Entity::find_by_id(endpoint_id.to_string())
        .one(db)
        .await?
    else {
        return Ok(Credentials::default());
    };
    let open = |field: &str, sealed: &str| {
        secrets
            .open_bytes(&context(endpoint_id, field), sealed)
            .map_err(|e| StoreError::Corrupt(format!("{field} of endpoint {endpoint_id}: {e}")))
    };
    let headers = match &row.headers_sealed {
        Some(sealed) => serde_json::from_slice(&open(HEADERS, sealed)?)
            .map_err(|e| StoreError::Corrupt(format!("headers of endpoint {endpoint_id}: {e}")))?,
        None => Vec::new(),
    };
    let oauth2 = match (
        &row.oauth_token_url,
        &row.oauth_client_id,
        &row.oauth_secret_sealed,
    ) {
        (Some(token_url), Some(client_id), Some(sealed)) => Some(OAuth2Client {
            token_url: token_url.clone(),
            client_id: client_id.clone(),
            client_secret: String::from_utf8(open(OAUTH2, sealed)?)
                .map_err(|_| StoreError::Corrupt(format!("{OAUTH2} of endpoint {endpoint_id}")))?,
            scope: row.oauth_scope.clone(),
            audience: row.oauth_audience.clone(),
        }),
        _ => None,
    };
    let client_cert = match (&row.cert_pem, &row.cert_key_sealed) {
        (Some(pem), Some(sealed)) => Some((pem.clone(), open(CLIENT_KEY, sealed)?)),
        _ => None,
    };
    Ok(Credentials {
        headers,
        oauth2,
        client_cert,
    })
}

/// What is shown of the endpoint's credentials.
pub async fn shown(db: &impl ConnectionTrait, endpoint_id: &str) -> Result<Shown, StoreError> {
    let Some(row) = endpoint_auth::Entity::find_by_id(endpoint_id.to_string())
        .one(db)
        .await?
    else {
        return Ok(Shown::default());
    };
    let header_names = match &row.header_names {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| StoreError::Corrupt(format!("header names of {endpoint_id}: {e}")))?,
        None => Vec::new(),
    };
    Ok(Shown {
        header_names,
        oauth2: row
            .oauth_token_url
            .zip(row.oauth_client_id)
            .map(|(url, id)| (url, id, row.oauth_scope, row.oauth_audience)),
        client_cert: row.cert_subject.zip(row.cert_not_after),
    })
}

/// One change to an endpoint's credentials (`None` inside removes it).
pub enum Change<'a> {
    Headers(Option<&'a [(String, String)]>),
    OAuth2(Option<&'a OAuth2Client>),
    /// Chain PEM, key PEM, subject, expiry (ms).
    ClientCert(Option<(&'a str, &'a str, &'a str, i64)>),
}

/// Applies `change` to endpoint `endpoint_id` (its owner was checked by
/// the caller).
pub(super) async fn apply(
    db: &impl ConnectionTrait,
    secrets: &SecretBox,
    endpoint_id: &str,
    change: Change<'_>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let backend = db.get_database_backend();
    db.execute_raw(sql(
        backend,
        "INSERT INTO endpoint_auth (endpoint_id, updated_at) VALUES (?, ?) ON CONFLICT (endpoint_id) DO NOTHING",
        vec![endpoint_id.into(), now_ms.into()],
    ))
    .await?;
    let seal = |field: &str, plain: &[u8]| secrets.seal_bytes(&context(endpoint_id, field), plain);
    let text = |v: Option<String>| Value::from(v);
    let (set, mut values): (&str, Vec<Value>) = match change {
        Change::Headers(headers) => {
            let names = headers.map(|h| {
                serde_json::to_string(&h.iter().map(|(n, _)| n).collect::<Vec<_>>())
                    .unwrap_or_default()
            });
            let sealed = headers.map(|h| seal(HEADERS, &serde_json::to_vec(h).unwrap_or_default()));
            (
                "header_names = ?, headers_sealed = ?",
                vec![text(names), text(sealed)],
            )
        }
        Change::OAuth2(client) => (
            "oauth_token_url = ?, oauth_client_id = ?, oauth_scope = ?, oauth_audience = ?, oauth_secret_sealed = ?",
            vec![
                text(client.map(|c| c.token_url.clone())),
                text(client.map(|c| c.client_id.clone())),
                text(client.and_then(|c| c.scope.clone())),
                text(client.and_then(|c| c.audience.clone())),
                text(client.map(|c| seal(OAUTH2, c.client_secret.as_bytes()))),
            ],
        ),
        Change::ClientCert(cert) => (
            "cert_pem = ?, cert_key_sealed = ?, cert_subject = ?, cert_not_after = ?, cert_warned_at = NULL",
            vec![
                text(cert.map(|c| c.0.to_string())),
                text(cert.map(|c| seal(CLIENT_KEY, c.1.as_bytes()))),
                text(cert.map(|c| c.2.to_string())),
                Value::from(cert.map(|c| c.3)),
            ],
        ),
    };
    values.extend([now_ms.into(), endpoint_id.into()]);
    db.execute_raw(sql(
        backend,
        &format!("UPDATE endpoint_auth SET {set}, updated_at = ? WHERE endpoint_id = ?"),
        values,
    ))
    .await?;
    Ok(())
}

/// Warns the owners of client certificates that expire within `ahead_ms`
/// of `now_ms` and were not warned about since they came that close: marks
/// each warned (guarded, so one writer of several does it) and returns an
/// `endpoint.certificate_expiring` event for each it marked.
pub async fn warn_expiring(
    db: &impl ConnectionTrait,
    now_ms: i64,
    ahead_ms: i64,
) -> Result<Vec<crate::domain::event::NewEvent>, StoreError> {
    let mut events = Vec::new();
    for (endpoint_id, partner_id, url, subject, not_after) in
        certificates_expiring(db, now_ms.saturating_add(ahead_ms), ahead_ms).await?
    {
        let marked = db
            .execute_raw(sql(
                db.get_database_backend(),
                "UPDATE endpoint_auth SET cert_warned_at = ? WHERE endpoint_id = ? AND cert_not_after = ? \
                 AND (cert_warned_at IS NULL OR cert_warned_at < cert_not_after - ?)",
                vec![now_ms.into(), endpoint_id.as_str().into(), not_after.into(), ahead_ms.into()],
            ))
            .await?;
        if marked.rows_affected() == 1 {
            let data = serde_json::json!({
                "endpoint_id": endpoint_id,
                "url": url,
                "subject": subject,
                "expires_at": crate::domain::event::format_time(not_after),
            });
            events.push(super::health::operational(
                partner_id,
                &endpoint_id,
                "endpoint.certificate_expiring",
                data,
                now_ms,
            ));
        }
    }
    Ok(events)
}

/// Client certificates expiring by `by_ms` whose owner is due a warning
/// (`client_cert::due_warning`): (endpoint id, partner id, url, subject,
/// expiry).
async fn certificates_expiring(
    db: &impl ConnectionTrait,
    by_ms: i64,
    ahead_ms: i64,
) -> Result<Vec<(String, String, String, String, i64)>, StoreError> {
    Ok(super::query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT a.endpoint_id, e.partner_id, e.url, a.cert_subject, a.cert_not_after, a.cert_warned_at \
             FROM endpoint_auth a \
             JOIN endpoint e ON e.id = a.endpoint_id \
             WHERE a.cert_not_after IS NOT NULL AND a.cert_not_after <= ?",
            vec![by_ms.into()],
        ),
        |r| {
            Ok((
                (
                    r.try_get::<String>("", "endpoint_id")?,
                    r.try_get::<String>("", "partner_id")?,
                    r.try_get::<String>("", "url")?,
                    r.try_get::<String>("", "cert_subject")?,
                    r.try_get::<i64>("", "cert_not_after")?,
                ),
                r.try_get::<Option<i64>>("", "cert_warned_at")?,
            ))
        },
    )
    .await?
    .into_iter()
    .filter(|(c, warned)| due_warning(c.4, *warned, by_ms - ahead_ms, ahead_ms))
    .map(|(c, _)| c)
    .collect())
}

impl super::scoped::Scoped<'_> {
    /// Changes the credentials of the partner's endpoint `id`; `None` if it
    /// is not theirs.
    pub async fn change_receiver_auth(
        &self,
        secrets: &SecretBox,
        id: &str,
        change: Change<'_>,
        now_ms: i64,
    ) -> Result<Option<Shown>, StoreError> {
        if self.endpoint(id).await?.is_none() {
            return Ok(None);
        }
        apply(self.db, secrets, id, change, now_ms).await?;
        shown(self.db, id).await.map(Some)
    }

    /// What is shown of the credentials of the partner's endpoint `id`.
    pub async fn receiver_auth(&self, id: &str) -> Result<Option<Shown>, StoreError> {
        if self.endpoint(id).await?.is_none() {
            return Ok(None);
        }
        shown(self.db, id).await.map(Some)
    }
}
