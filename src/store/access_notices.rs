//! Who may call and for whom events may be published changes rarely, and is
//! read on every request: instances hold it in memory (`http::known_keys`,
//! `http::known_partners`). On PostgreSQL, whoever revokes a key tells every
//! instance at commit (NOTIFY on `hookd_access`), so each drops what it holds
//! of it at once; on SQLite, and for a notification lost, the caches' short
//! expiry is the bound.

use sea_orm::{ConnectionTrait, DbBackend};

use super::{StoreError, sql};

/// The channel of access changes. The payload is `key|<key id>` (the key was
/// revoked) or `partner|<partner id>` (the partner is gone).
pub const ACCESS_CHANNEL: &str = "hookd_access";

/// What an access notification says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessChange {
    /// The key with this id no longer works.
    KeyRevoked(String),
    /// The partner with this id no longer exists.
    PartnerGone(String),
}

impl AccessChange {
    /// Reads a notification's payload.
    pub fn parse(payload: &str) -> Option<AccessChange> {
        match payload.split_once('|')? {
            (_, "") => None,
            ("key", id) => Some(AccessChange::KeyRevoked(id.to_string())),
            ("partner", id) => Some(AccessChange::PartnerGone(id.to_string())),
            _ => None,
        }
    }

    fn payload(&self) -> String {
        match self {
            AccessChange::KeyRevoked(id) => format!("key|{id}"),
            AccessChange::PartnerGone(id) => format!("partner|{id}"),
        }
    }
}

/// Tells every instance about `change` when `db` commits (at once outside a
/// transaction). Nothing on SQLite: its one instance forgets what it changes
/// itself, and what another process changes (`hookd key revoke`) expires.
pub async fn announce(db: &impl ConnectionTrait, change: &AccessChange) -> Result<(), StoreError> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    db.execute_raw(sql(
        DbBackend::Postgres,
        "SELECT pg_notify(?, ?)",
        vec![ACCESS_CHANNEL.into(), change.payload().into()],
    ))
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::AccessChange;

    #[test]
    fn a_notice_names_a_revoked_key_or_a_partner_gone_and_nothing_else() {
        for change in [
            AccessChange::KeyRevoked("key_1".into()),
            AccessChange::PartnerGone("ptn_1".into()),
        ] {
            assert_eq!(AccessChange::parse(&change.payload()), Some(change));
        }
        for garbage in ["key|", "key", "endpoint|ep_1", ""] {
            assert_eq!(AccessChange::parse(garbage), None, "{garbage:?}");
        }
    }
}
