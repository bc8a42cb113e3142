//! Keys made for one `serve --dev` run: revoked when the run stops, and at
//! the next start when it was killed before it could.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum ApiKey {
    Table,
    Id,
}

/// A key `serve --dev` made, with the run that made it.
#[derive(DeriveIden)]
enum DevKey {
    Table,
    KeyId,
    /// The instance id of the run.
    RunId,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(DevKey::Table)
                    .col(string(DevKey::KeyId).primary_key())
                    .col(string(DevKey::RunId))
                    .col(big_integer(DevKey::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(DevKey::Table, DevKey::KeyId)
                            .to(ApiKey::Table, ApiKey::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(DevKey::Table).to_owned())
            .await
    }
}
