//! Indexes for the operator's views: the dashboard's charts read attempts
//! by start time, and the search across partners lists deliveries newest
//! first. Without them both scan their table.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Attempt {
    Table,
    StartedAt,
}

#[derive(DeriveIden)]
enum Delivery {
    Table,
    CreatedAt,
    Id,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name("attempt_started")
                    .table(Attempt::Table)
                    .col(Attempt::StartedAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("delivery_created")
                    .table(Delivery::Table)
                    .col(Delivery::CreatedAt)
                    .col(Delivery::Id)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("delivery_created")
                    .table(Delivery::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("attempt_started")
                    .table(Attempt::Table)
                    .to_owned(),
            )
            .await
    }
}
