//! Each instance's role (`all`, `api` or `delivery`): an `api` instance is
//! never a candidate for an endpoint lease, and operators see who does what.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Instance::Table)
                    .add_column(
                        ColumnDef::new(Instance::Role)
                            .string()
                            .not_null()
                            .default("all"),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Instance::Table)
                    .drop_column(Instance::Role)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Instance {
    Table,
    Role,
}
