//! Receiver conformance checks: each finished check of an endpoint with its
//! scorecard, and the one slot per endpoint that limits how often a check
//! may start (held in the database, so the limit holds across instances).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Endpoint {
    Table,
    Id,
}

/// One finished conformance check.
#[derive(DeriveIden)]
enum ReceiverCheck {
    Table,
    Id,
    EndpointId,
    PartnerId,
    Passed,
    /// The scorecard's cases as JSON text.
    Result,
    CreatedAt,
}

/// When a check of the endpoint last started.
#[derive(DeriveIden)]
enum ReceiverCheckSlot {
    Table,
    EndpointId,
    StartedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ReceiverCheck::Table)
                    .col(string(ReceiverCheck::Id).primary_key())
                    .col(string(ReceiverCheck::EndpointId))
                    .col(string(ReceiverCheck::PartnerId))
                    .col(boolean(ReceiverCheck::Passed))
                    .col(text(ReceiverCheck::Result))
                    .col(big_integer(ReceiverCheck::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(ReceiverCheck::Table, ReceiverCheck::EndpointId)
                            .to(Endpoint::Table, Endpoint::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // The list reads an endpoint's checks newest first.
        manager
            .create_index(
                Index::create()
                    .name("receiver_check_endpoint")
                    .table(ReceiverCheck::Table)
                    .col(ReceiverCheck::EndpointId)
                    .col(ReceiverCheck::CreatedAt)
                    .col(ReceiverCheck::Id)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ReceiverCheckSlot::Table)
                    .col(string(ReceiverCheckSlot::EndpointId).primary_key())
                    .col(big_integer(ReceiverCheckSlot::StartedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(ReceiverCheckSlot::Table, ReceiverCheckSlot::EndpointId)
                            .to(Endpoint::Table, Endpoint::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ReceiverCheckSlot::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(ReceiverCheck::Table).to_owned())
            .await
    }
}
