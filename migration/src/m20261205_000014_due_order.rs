//! The due index orders an endpoint's due deliveries by their id as well,
//! so a claim takes deliveries due at the same time oldest first (ids are
//! ULIDs: their creation time comes first) straight from the index. It
//! replaces `delivery_due`, under a new name.
//! (The claim's `state IN (…)` list must stay word for word the same.)

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

const STATES: &str = "WHERE state IN ('pending', 'failed', 'delivering')";

async fn replace(
    manager: &SchemaManager<'_>,
    (old, new): (&str, &str),
    columns: &str,
) -> Result<(), DbErr> {
    let db = manager.get_connection();
    db.execute_unprepared(&format!(
        "CREATE INDEX {new} ON delivery ({columns}) {STATES}"
    ))
    .await?;
    db.execute_unprepared(&format!("DROP INDEX {old}"))
        .await
        .map(|_| ())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let names = ("delivery_due", "delivery_due_in_order");
        replace(manager, names, "endpoint_id, next_attempt_at, id").await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let names = ("delivery_due_in_order", "delivery_due");
        replace(manager, names, "endpoint_id, next_attempt_at").await
    }
}
