//! Partners: the tenants whose endpoints receive events.

use std::collections::HashSet;

use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect,
};

use super::{StoreError, entity::partner};
use crate::domain::ids::new_id;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partner {
    pub id: String,
    pub name: String,
    pub status: String,
    pub created_at: i64,
    pub notification_email: Option<String>,
}

impl From<partner::Model> for Partner {
    fn from(m: partner::Model) -> Self {
        Partner {
            id: m.id,
            name: m.name,
            status: m.status,
            created_at: m.created_at,
            notification_email: m.notification_email,
        }
    }
}

/// Creates a partner; `id` defaults to a new `ptn_` id.
pub async fn create(
    db: &impl ConnectionTrait,
    id: Option<String>,
    name: &str,
    now_ms: i64,
) -> Result<Partner, StoreError> {
    let model = partner::ActiveModel {
        id: Set(id.unwrap_or_else(|| new_id("ptn"))),
        name: Set(name.to_string()),
        status: Set("active".into()),
        created_at: Set(now_ms),
        notification_email: Set(None),
    };
    Ok(partner::Entity::insert(model)
        .exec_with_returning(db)
        .await?
        .into())
}

pub async fn find(db: &impl ConnectionTrait, id: &str) -> Result<Option<Partner>, StoreError> {
    Ok(partner::Entity::find_by_id(id.to_string())
        .one(db)
        .await?
        .map(Into::into))
}

/// Which of these partner ids exist.
pub async fn existing(
    db: &impl ConnectionTrait,
    ids: &[&str],
) -> Result<HashSet<String>, StoreError> {
    let found: Vec<String> = partner::Entity::find()
        .select_only()
        .column(partner::Column::Id)
        .filter(partner::Column::Id.is_in(ids.iter().copied()))
        .into_tuple()
        .all(db)
        .await?;
    Ok(found.into_iter().collect())
}

/// Partners in creation order, after `after`.
pub async fn list(
    db: &impl ConnectionTrait,
    after: Option<&(i64, String)>,
    limit: u32,
) -> Result<Vec<Partner>, StoreError> {
    use sea_orm::{QueryOrder, sea_query::Condition};
    // The operator's own partner holds hookd's notification endpoint: not a tenant.
    let mut q =
        partner::Entity::find().filter(partner::Column::Id.ne(crate::notify::OPERATOR_PARTNER));
    if let Some((at, id)) = after {
        q = q.filter(
            Condition::any()
                .add(partner::Column::CreatedAt.gt(*at))
                .add(
                    Condition::all()
                        .add(partner::Column::CreatedAt.eq(*at))
                        .add(partner::Column::Id.gt(id.clone())),
                ),
        );
    }
    Ok(q.order_by_asc(partner::Column::CreatedAt)
        .order_by_asc(partner::Column::Id)
        .limit(u64::from(limit))
        .all(db)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}
