//! A partial index over unfinished deliveries, in due order per endpoint:
//! an endpoint's claim reads only its due rows, however long its history.
//! (The claim's `state IN (…)` list must stay word for word the same.)

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE INDEX delivery_due ON delivery (endpoint_id, next_attempt_at) \
                 WHERE state IN ('pending', 'failed', 'delivering')",
            )
            .await
            .map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP INDEX delivery_due")
            .await
            .map(|_| ())
    }
}
