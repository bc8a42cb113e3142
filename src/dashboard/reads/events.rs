//! One event for its page, beyond what the Partner API's read gives: when
//! hookd received and published it (or why the fanout rejected it), and
//! the schema version each of its deliveries is sent at.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use crate::store::{
    StoreError,
    entity::{delivery, outbox_event},
};

/// What the outbox keeps of an event besides the event itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// When hookd received it (Unix ms).
    pub received_at: i64,
    pub published_at: Option<i64>,
    /// Why the fanout refused it (it fails its schema).
    pub rejected_reason: Option<String>,
}

/// The outbox's record of the event `id`.
pub async fn record(db: &impl ConnectionTrait, id: &str) -> Result<Option<Record>, StoreError> {
    let row = outbox_event::Entity::find_by_id(id.to_string())
        .one(db)
        .await?;
    Ok(row.map(|r| Record {
        received_at: r.created_at,
        published_at: r.published_at,
        rejected_reason: r.rejected_reason,
    }))
}

/// The version each delivery of the event `id` is sent at, by delivery id
/// (`None`: the event's own).
pub async fn versions(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<HashMap<String, Option<u32>>, StoreError> {
    let rows: Vec<(String, Option<i32>)> = delivery::Entity::find()
        .select_only()
        .column(delivery::Column::Id)
        .column(delivery::Column::SchemaVersion)
        .filter(delivery::Column::EventId.eq(id))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(d, v)| (d, v.and_then(|v| u32::try_from(v).ok())))
        .collect())
}
