//! The event contract: why a delivery was closed without being sent
//! (`cancelled`, `skipped`), the schema version each delivery is sent at, the
//! renderings of an event at other versions, why the fanout rejected an
//! event written around the API, and each endpoint's pinned versions.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Delivery {
    Table,
    /// Why it was closed without an attempt, e.g. `endpoint-unsubscribed: …`.
    Reason,
    /// The version it is sent at; NULL: the event's own.
    SchemaVersion,
}

#[derive(DeriveIden)]
enum OutboxEvent {
    Table,
    /// A JSON object: version → `data` at that version (sent by the producer
    /// or projected at fanout), kept so every retry sends the same bytes.
    Renditions,
    /// Set when the fanout refused the event (it fails its schema).
    RejectedReason,
}

#[derive(DeriveIden)]
enum Endpoint {
    Table,
    /// A JSON object: event type → pinned version; absent types get the latest.
    SchemaVersions,
}

fn nullable_text(name: impl IntoIden) -> ColumnDef {
    ColumnDef::new(name).text().null().to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        let columns: [(DynIden, ColumnDef); 5] = [
            (Delivery::Table.into_iden(), nullable_text(Delivery::Reason)),
            (
                Delivery::Table.into_iden(),
                ColumnDef::new(Delivery::SchemaVersion)
                    .integer()
                    .null()
                    .to_owned(),
            ),
            (
                OutboxEvent::Table.into_iden(),
                nullable_text(OutboxEvent::Renditions),
            ),
            (
                OutboxEvent::Table.into_iden(),
                nullable_text(OutboxEvent::RejectedReason),
            ),
            (
                Endpoint::Table.into_iden(),
                nullable_text(Endpoint::SchemaVersions),
            ),
        ];
        for (table, mut column) in columns {
            manager
                .alter_table(
                    Table::alter()
                        .table(table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let columns: [(DynIden, DynIden); 5] = [
            (Delivery::Table.into_iden(), Delivery::Reason.into_iden()),
            (
                Delivery::Table.into_iden(),
                Delivery::SchemaVersion.into_iden(),
            ),
            (
                OutboxEvent::Table.into_iden(),
                OutboxEvent::Renditions.into_iden(),
            ),
            (
                OutboxEvent::Table.into_iden(),
                OutboxEvent::RejectedReason.into_iden(),
            ),
            (
                Endpoint::Table.into_iden(),
                Endpoint::SchemaVersions.into_iden(),
            ),
        ];
        for (table, column) in columns {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        Ok(())
    }
}
