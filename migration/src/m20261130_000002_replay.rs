//! Manual attempts: a queue of replays, apart from the retry schedule, so a
//! replay never disturbs a delivery's state or its next scheduled attempt.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Replay::Table)
                    .col(string(Replay::Id).primary_key())
                    .col(string(Replay::DeliveryId))
                    .col(string(Replay::EndpointId))
                    .col(big_integer(Replay::RequestedAt))
                    // When the replay may be claimed: now, or its lease end.
                    .col(big_integer(Replay::NextAttemptAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Replay::Table, Replay::DeliveryId)
                            .to(Delivery::Table, Delivery::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("replay_endpoint_due")
                    .table(Replay::Table)
                    .col(Replay::EndpointId)
                    .col(Replay::NextAttemptAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Replay::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Replay {
    Table,
    Id,
    DeliveryId,
    EndpointId,
    RequestedAt,
    NextAttemptAt,
}

#[derive(DeriveIden)]
enum Delivery {
    Table,
    Id,
}
