//! The outbox keeps each event's W3C trace context: the `traceparent` (and
//! `tracestate`) its publication and attempts join, so a retry days later is
//! still a span of the producer's trace. Both nullable: an event written
//! without one starts no trace of its own until it is attempted.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OutboxEvent {
    Table,
    Traceparent,
    Tracestate,
}

/// Alters the table once per column: SQLite's ALTER TABLE changes one at a time.
async fn each_column(
    manager: &SchemaManager<'_>,
    columns: [OutboxEvent; 2],
    change: fn(&mut TableAlterStatement, OutboxEvent) -> &mut TableAlterStatement,
) -> Result<(), DbErr> {
    for column in columns {
        let mut alter = Table::alter();
        alter.table(OutboxEvent::Table);
        change(&mut alter, column);
        manager.alter_table(alter).await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let columns = [OutboxEvent::Traceparent, OutboxEvent::Tracestate];
        each_column(manager, columns, |t, c| t.add_column(text_null(c))).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let columns = [OutboxEvent::Tracestate, OutboxEvent::Traceparent];
        each_column(manager, columns, |t, c| t.drop_column(c)).await
    }
}
