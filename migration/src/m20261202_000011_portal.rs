//! The partner portal and the dashboard's charts: portal sessions name the
//! partner they see; one-time portal links; and a sample of the backlog
//! per minute, which the overview's charts draw (states and the outbox's
//! age cannot be read back for a past minute from the rows themselves).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum DashboardSession {
    Table,
    /// Set for a portal session: the one partner it sees.
    PartnerId,
}

/// A one-time sign-in link to the portal, minted by an operator.
#[derive(DeriveIden)]
enum PortalLink {
    Table,
    Id,
    PartnerId,
    /// SHA-256 of the link's secret; the secret itself is never stored.
    TokenHash,
    CreatedAt,
    ExpiresAt,
    /// Set when the link was used; a link works once.
    UsedAt,
    /// The operator key that minted it.
    CreatedBy,
}

/// The backlog as one instance saw it at the start of a minute.
#[derive(DeriveIden)]
enum BacklogSample {
    Table,
    /// Unix milliseconds of the minute's start.
    Minute,
    Pending,
    Failed,
    Delivering,
    Paused,
    Dead,
    Unpublished,
    /// Age of the oldest unpublished event then, in milliseconds.
    OutboxAgeMs,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(DashboardSession::Table)
                    .add_column(text_null(DashboardSession::PartnerId))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(PortalLink::Table)
                    .col(text(PortalLink::Id).primary_key())
                    .col(text(PortalLink::PartnerId))
                    .col(text(PortalLink::TokenHash).unique_key())
                    .col(big_integer(PortalLink::CreatedAt))
                    .col(big_integer(PortalLink::ExpiresAt))
                    .col(big_integer_null(PortalLink::UsedAt))
                    .col(text(PortalLink::CreatedBy))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(BacklogSample::Table)
                    .col(big_integer(BacklogSample::Minute).primary_key())
                    .col(big_integer(BacklogSample::Pending))
                    .col(big_integer(BacklogSample::Failed))
                    .col(big_integer(BacklogSample::Delivering))
                    .col(big_integer(BacklogSample::Paused))
                    .col(big_integer(BacklogSample::Dead))
                    .col(big_integer(BacklogSample::Unpublished))
                    .col(big_integer_null(BacklogSample::OutboxAgeMs))
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(BacklogSample::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(PortalLink::Table).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(DashboardSession::Table)
                    .drop_column(DashboardSession::PartnerId)
                    .to_owned(),
            )
            .await?;
        Ok(())
    }
}
