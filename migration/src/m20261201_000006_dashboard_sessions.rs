//! Dashboard sessions held on the server, so signing out ends a session for
//! every copy of its cookie, on every instance.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(DashboardSession::Table)
                    .col(string(DashboardSession::Id).primary_key())
                    .col(string(DashboardSession::KeyId))
                    .col(big_integer(DashboardSession::CreatedAt))
                    .col(big_integer(DashboardSession::ExpiresAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("dashboard_session_expires")
                    .table(DashboardSession::Table)
                    .col(DashboardSession::ExpiresAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(DashboardSession::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum DashboardSession {
    Table,
    Id,
    KeyId,
    CreatedAt,
    ExpiresAt,
}
