//! Scheduled attempts counted apart from manual ones: the retry schedule is
//! indexed by them, so a manual replay never costs a delivery its retries.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Delivery::Table)
                    .add_column(
                        ColumnDef::new(Delivery::ScheduledAttempts)
                            .integer()
                            .not_null()
                            .default(0),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Delivery::Table)
                    .drop_column(Delivery::ScheduledAttempts)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Delivery {
    Table,
    ScheduledAttempts,
}
