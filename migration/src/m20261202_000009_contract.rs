//! The event contract: why a delivery was closed without being sent
//! (`cancelled`, `skipped`), the schema version each delivery is sent at, the
//! renderings of an event at other versions, why the fanout rejected an
//! event written around the API, each endpoint's pinned versions, and the
//! armed state of producers' thresholds (`hookd::thresholds`).

use sea_orm_migration::{prelude::*, schema::*};

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

/// One row per (subject, threshold) that a producer's tracker has seen;
/// a row absent is armed.
#[derive(DeriveIden)]
enum ThresholdState {
    Table,
    /// What the value belongs to, e.g. `budget:bud_17`.
    Subject,
    /// The threshold: a decimal (`10.000000`) or a percentage (`80%`).
    Threshold,
    /// False from the crossing that fired it until it re-arms.
    Armed,
    /// The period of the last change, e.g. `2026-10`; a new one re-arms.
    Period,
    UpdatedAt,
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
        manager
            .create_table(
                Table::create()
                    .table(ThresholdState::Table)
                    .col(text(ThresholdState::Subject))
                    .col(text(ThresholdState::Threshold))
                    .col(boolean(ThresholdState::Armed).default(true))
                    .col(text_null(ThresholdState::Period))
                    .col(big_integer(ThresholdState::UpdatedAt))
                    .primary_key(
                        Index::create()
                            .col(ThresholdState::Subject)
                            .col(ThresholdState::Threshold),
                    )
                    .to_owned(),
            )
            .await?;
        // `schema_version` becomes an integer: a stored value that is not a
        // positive integer (any short text was accepted before) is read as 1,
        // the only version there was.
        let not_an_integer = match manager.get_database_backend() {
            sea_orm::DatabaseBackend::Postgres => "schema_version !~ '^[1-9][0-9]{0,8}$'",
            _ => {
                "(schema_version NOT GLOB '[1-9]*' OR schema_version GLOB '*[^0-9]*' OR length(schema_version) > 9)"
            }
        };
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "UPDATE outbox_event SET schema_version = '1' WHERE {not_an_integer}"
            ))
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ThresholdState::Table).to_owned())
            .await?;
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
