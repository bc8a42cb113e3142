//! API keys: random, shown once, stored as a SHA-256 hash under a lookup prefix.

use base64::Engine as _;
use rand::RngCore;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{StoreError, access_notices, entity::api_key};
use crate::domain::ids::new_id;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Produces events (`POST /v1/events`).
    Service,
    /// Manages one partner's endpoints.
    Partner,
    /// Manages partners and keys.
    Operator,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Service => "service",
            Role::Partner => "partner",
            Role::Operator => "operator",
        }
    }
    fn parse(s: &str) -> Option<Role> {
        [Role::Service, Role::Partner, Role::Operator]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
    fn tag(self) -> &'static str {
        match self {
            Role::Service => "hks_",
            Role::Partner => "hkp_",
            Role::Operator => "hko_",
        }
    }
}

/// Who a valid key belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub key_id: String,
    pub role: Role,
    pub partner_id: Option<String>,
}

/// A key as created: the plaintext is returned this once.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub id: String,
    pub key: String,
}

const PREFIX_LEN: usize = 12;

/// How a key is stored: the SHA-256 of the whole key, in hex.
pub fn hash(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub async fn create(
    db: &impl ConnectionTrait,
    role: Role,
    partner_id: Option<&str>,
    now_ms: i64,
) -> Result<NewKey, StoreError> {
    let mut random = [0u8; 30];
    rand::rng().fill_bytes(&mut random);
    let key = format!(
        "{}{}",
        role.tag(),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random)
    );
    let id = new_id("key");
    api_key::Entity::insert(api_key::ActiveModel {
        id: Set(id.clone()),
        partner_id: Set(partner_id.map(str::to_string)),
        prefix: Set(key[..PREFIX_LEN].to_string()),
        hash: Set(hash(&key)),
        role: Set(role.as_str().into()),
        created_at: Set(now_ms),
        last_used_at: Set(None),
        revoked_at: Set(None),
    })
    .exec_without_returning(db)
    .await?;
    Ok(NewKey { id, key })
}

fn principal(row: api_key::Model) -> Result<Principal, StoreError> {
    let role = Role::parse(&row.role)
        .ok_or_else(|| StoreError::Corrupt(format!("key {} has role {}", row.id, row.role)))?;
    Ok(Principal {
        key_id: row.id,
        role,
        partner_id: row.partner_id,
    })
}

/// The principal of a presented key, if it is known and not revoked.
pub async fn authenticate(
    db: &impl ConnectionTrait,
    presented: &str,
) -> Result<Option<Principal>, StoreError> {
    let Some(prefix) = presented.get(..PREFIX_LEN) else {
        return Ok(None);
    };
    let Some(row) = api_key::Entity::find()
        .filter(api_key::Column::Prefix.eq(prefix))
        .filter(api_key::Column::RevokedAt.is_null())
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    if !bool::from(hash(presented).as_bytes().ct_eq(row.hash.as_bytes())) {
        return Ok(None);
    }
    principal(row).map(Some)
}

/// The hashes of every unrevoked key: what the front door holds in memory
/// to tell which callers may reach the database past their address's budget.
pub async fn active_hashes(db: &impl ConnectionTrait) -> Result<Vec<String>, StoreError> {
    use sea_orm::QuerySelect;
    Ok(api_key::Entity::find()
        .select_only()
        .column(api_key::Column::Hash)
        .filter(api_key::Column::RevokedAt.is_null())
        .into_tuple::<String>()
        .all(db)
        .await?)
}

/// The principal of an unrevoked key found by its id (a dashboard session
/// names its key by id; the key itself is never stored in the browser).
pub async fn active_by_id(
    db: &impl ConnectionTrait,
    key_id: &str,
) -> Result<Option<Principal>, StoreError> {
    let Some(row) = api_key::Entity::find_by_id(key_id.to_string())
        .filter(api_key::Column::RevokedAt.is_null())
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    principal(row).map(Some)
}

/// Revokes a key, and tells every instance on PostgreSQL to stop accepting
/// it at once (see `access_notices`); whether it was valid until now.
pub async fn revoke(
    db: &impl ConnectionTrait,
    key_id: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let res = api_key::Entity::update_many()
        .col_expr(
            api_key::Column::RevokedAt,
            sea_orm::sea_query::Expr::value(now_ms),
        )
        .filter(api_key::Column::Id.eq(key_id))
        .filter(api_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    if res.rows_affected != 1 {
        return Ok(false);
    }
    let change = access_notices::AccessChange::KeyRevoked(key_id.to_string());
    if let Err(e) = access_notices::announce(db, &change).await {
        // The key is revoked all the same; other instances' caches expire it.
        tracing::warn!(error = %e, key_id, "other instances could not be told of a key's revocation");
    }
    Ok(true)
}

/// A key as listed: never the key, nor its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub id: String,
    pub role: Role,
    pub partner_id: Option<String>,
    /// The key's first characters (`hkp_AbCdEfGh`): enough to tell which key
    /// one holds, far too few to use.
    pub prefix: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

impl TryFrom<api_key::Model> for KeyInfo {
    type Error = StoreError;
    fn try_from(row: api_key::Model) -> Result<Self, StoreError> {
        let role = Role::parse(&row.role)
            .ok_or_else(|| StoreError::Corrupt(format!("key {} has role {}", row.id, row.role)))?;
        Ok(KeyInfo {
            id: row.id,
            role,
            partner_id: row.partner_id,
            prefix: row.prefix,
            created_at: row.created_at,
            revoked_at: row.revoked_at,
        })
    }
}

/// Which keys to list; every field narrows it.
#[derive(Debug, Default, Clone)]
pub struct KeyFilter {
    pub partner_id: Option<String>,
    pub role: Option<Role>,
    /// Revoked keys too.
    pub revoked: bool,
}

/// Keys in creation order, after `after`.
pub async fn list(
    db: &impl ConnectionTrait,
    f: &KeyFilter,
    after: Option<&(i64, String)>,
    limit: u32,
) -> Result<Vec<KeyInfo>, StoreError> {
    use sea_orm::{QueryOrder, QuerySelect, sea_query::Condition};
    let mut q = api_key::Entity::find();
    if let Some(p) = &f.partner_id {
        q = q.filter(api_key::Column::PartnerId.eq(p.clone()));
    }
    if let Some(r) = f.role {
        q = q.filter(api_key::Column::Role.eq(r.as_str()));
    }
    if !f.revoked {
        q = q.filter(api_key::Column::RevokedAt.is_null());
    }
    if let Some((at, id)) = after {
        q = q.filter(
            Condition::any()
                .add(api_key::Column::CreatedAt.gt(*at))
                .add(
                    Condition::all()
                        .add(api_key::Column::CreatedAt.eq(*at))
                        .add(api_key::Column::Id.gt(id.clone())),
                ),
        );
    }
    q.order_by_asc(api_key::Column::CreatedAt)
        .order_by_asc(api_key::Column::Id)
        .limit(u64::from(limit))
        .all(db)
        .await?
        .into_iter()
        .map(KeyInfo::try_from)
        .collect()
}

/// One key by id, revoked or not.
pub async fn find(db: &impl ConnectionTrait, key_id: &str) -> Result<Option<KeyInfo>, StoreError> {
    api_key::Entity::find_by_id(key_id.to_string())
        .one(db)
        .await?
        .map(KeyInfo::try_from)
        .transpose()
}
