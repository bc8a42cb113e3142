//! The last moment an instance that delivers was alive, kept when every
//! instance has stopped (their rows go): the first to start again, or an
//! API-only instance meanwhile, sees how long nothing delivered.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum DeliveryPulse {
    Table,
    /// Always 1: one row.
    Id,
    /// The instance's clock, Unix milliseconds.
    BeatAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(DeliveryPulse::Table)
                    .col(integer(DeliveryPulse::Id).primary_key())
                    .col(big_integer(DeliveryPulse::BeatAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(DeliveryPulse::Table).to_owned())
            .await
    }
}
