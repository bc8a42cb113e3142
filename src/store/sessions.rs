//! Dashboard sessions: one row per sign-in, deleted at sign-out and swept
//! after expiry. A signed cookie names its row; the row is the truth.

use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use super::{StoreError, entity::dashboard_session};

/// Records a new dashboard session for `key_id`.
pub async fn create(
    db: &impl ConnectionTrait,
    id: &str,
    key_id: &str,
    now_ms: i64,
    expires_ms: i64,
) -> Result<(), StoreError> {
    insert(db, id, key_id, None, now_ms, expires_ms).await
}

/// Records a new portal session of `partner_id`, opened by `key_id` (a
/// partner key's id, or a portal link's).
pub async fn create_for_partner(
    db: &impl ConnectionTrait,
    id: &str,
    key_id: &str,
    partner_id: &str,
    now_ms: i64,
    expires_ms: i64,
) -> Result<(), StoreError> {
    insert(db, id, key_id, Some(partner_id), now_ms, expires_ms).await
}

/// The partner a live portal session sees.
pub async fn portal_partner(
    db: &impl ConnectionTrait,
    id: &str,
    key_id: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    Ok(dashboard_session::Entity::find_by_id(id.to_string())
        .filter(dashboard_session::Column::KeyId.eq(key_id))
        .filter(dashboard_session::Column::ExpiresAt.gt(now_ms))
        .one(db)
        .await?
        .and_then(|s| s.partner_id))
}

async fn insert(
    db: &impl ConnectionTrait,
    id: &str,
    key_id: &str,
    partner_id: Option<&str>,
    now_ms: i64,
    expires_ms: i64,
) -> Result<(), StoreError> {
    dashboard_session::Entity::insert(dashboard_session::ActiveModel {
        id: Set(id.to_string()),
        key_id: Set(key_id.to_string()),
        created_at: Set(now_ms),
        expires_at: Set(expires_ms),
        partner_id: Set(partner_id.map(str::to_string)),
    })
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// Whether session `id` of `key_id` exists and has not expired at `now_ms`.
pub async fn is_live(
    db: &impl ConnectionTrait,
    id: &str,
    key_id: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let row = dashboard_session::Entity::find_by_id(id.to_string())
        .filter(dashboard_session::Column::KeyId.eq(key_id))
        .filter(dashboard_session::Column::ExpiresAt.gt(now_ms))
        // A portal session never opens the dashboard.
        .filter(dashboard_session::Column::PartnerId.is_null())
        .one(db)
        .await?;
    Ok(row.is_some())
}

/// Ends session `id` (signing out); ending one that is gone is no error.
pub async fn end(db: &impl ConnectionTrait, id: &str) -> Result<(), StoreError> {
    dashboard_session::Entity::delete_by_id(id.to_string())
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes expired sessions; returns how many.
pub async fn sweep(db: &impl ConnectionTrait, now_ms: i64) -> Result<u64, StoreError> {
    let res = dashboard_session::Entity::delete_many()
        .filter(dashboard_session::Column::ExpiresAt.lte(now_ms))
        .exec(db)
        .await?;
    Ok(res.rows_affected)
}
