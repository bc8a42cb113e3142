//! One-time sign-in links to the portal. An operator (or the reseller's own
//! product, with an operator key) mints one for a partner; the partner's
//! person opens it once, before it expires, and gets a portal session. Only
//! the SHA-256 of the link's secret is stored.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use rand::RngCore as _;
use sea_orm::ConnectionTrait;
use sha2::{Digest, Sha256};

use super::{StoreError, sql};
use crate::domain::ids::new_id;

fn hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// A minted link: its id and its secret token (shown once).
#[derive(Debug, Clone)]
pub struct Minted {
    pub id: String,
    pub token: String,
}

/// Mints a link to `partner_id`'s portal, valid until `expires_ms`.
pub async fn mint(
    db: &impl ConnectionTrait,
    partner_id: &str,
    created_by: &str,
    now_ms: i64,
    expires_ms: i64,
) -> Result<Minted, StoreError> {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = URL_SAFE_NO_PAD.encode(bytes);
    let id = new_id("pl");
    db.execute_raw(sql(
        db.get_database_backend(),
        "INSERT INTO portal_link (id, partner_id, token_hash, created_at, expires_at, used_at, created_by) \
         VALUES (?, ?, ?, ?, ?, NULL, ?)",
        vec![
            id.clone().into(),
            partner_id.into(),
            hash(&token).into(),
            now_ms.into(),
            expires_ms.into(),
            created_by.into(),
        ],
    ))
    .await?;
    Ok(Minted { id, token })
}

/// Uses the link once: `(link id, partner id)` if it is unused and
/// unexpired at `now_ms` (and is used from now on); otherwise `None`.
pub async fn consume(
    db: &impl ConnectionTrait,
    token: &str,
    now_ms: i64,
) -> Result<Option<(String, String)>, StoreError> {
    let row = db
        .query_one_raw(sql(
            db.get_database_backend(),
            "UPDATE portal_link SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? \
             RETURNING id, partner_id",
            vec![now_ms.into(), hash(token).into(), now_ms.into()],
        ))
        .await?;
    Ok(match row {
        Some(r) => Some((r.try_get("", "id")?, r.try_get("", "partner_id")?)),
        None => None,
    })
}

/// The partner of an unused, unexpired link, without using it (the page
/// that asks to continue shows whose portal opens).
pub async fn peek(
    db: &impl ConnectionTrait,
    token: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    let row = db
        .query_one_raw(sql(
            db.get_database_backend(),
            "SELECT partner_id FROM portal_link WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
            vec![hash(token).into(), now_ms.into()],
        ))
        .await?;
    Ok(match row {
        Some(r) => Some(r.try_get("", "partner_id")?),
        None => None,
    })
}
