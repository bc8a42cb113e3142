//! The partner's feed read by time: `since`/`until` bound an event's
//! creation time, so a time-bounded read or export finds its first events
//! through this index instead of walking the partner's whole feed.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OutboxEvent {
    Table,
    PartnerId,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name("outbox_event_partner_created")
                    .table(OutboxEvent::Table)
                    .col(OutboxEvent::PartnerId)
                    .col(OutboxEvent::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("outbox_event_partner_created")
                    .table(OutboxEvent::Table)
                    .to_owned(),
            )
            .await
    }
}
