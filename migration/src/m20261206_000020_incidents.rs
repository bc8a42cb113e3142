//! Incidents: times when hookd's own delivery was impaired for a partner
//! (a backlog, the database unreachable, or opened by an operator), told
//! to the partner when they open and when they resolve.
//! At most one incident per partner and cause is open at a time (a partial
//! unique index), so several instances cannot open it twice. The partners'
//! and the operator's notification endpoints also subscribe to `hookd.*`,
//! the incident notices.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Incident {
    Table,
    Id,
    PartnerId,
    /// `backlog`, `database` or `manual`.
    Cause,
    Message,
    StartedAt,
    ResolvedAt,
    /// Counted when it resolves.
    DelayedEvents,
    /// `detector` or `operator`.
    OpenedBy,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Partner {
    Table,
    Id,
}

const OLD_TYPES: &str = r#"["endpoint.*"]"#;
const NEW_TYPES: &str = r#"["endpoint.*","hookd.*"]"#;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Incident::Table)
                    .col(string(Incident::Id).primary_key())
                    .col(string(Incident::PartnerId))
                    .col(string(Incident::Cause))
                    .col(text(Incident::Message))
                    .col(big_integer(Incident::StartedAt))
                    .col(big_integer_null(Incident::ResolvedAt))
                    .col(big_integer_null(Incident::DelayedEvents))
                    .col(string(Incident::OpenedBy))
                    .col(big_integer(Incident::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Incident::Table, Incident::PartnerId)
                            .to(Partner::Table, Partner::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        let db = manager.get_connection();
        // Both backends take a partial index: one open incident per
        // partner and cause, whoever tries to open it.
        db.execute_unprepared(
            "CREATE UNIQUE INDEX incident_open ON incident (partner_id, cause) WHERE resolved_at IS NULL",
        )
        .await?;
        db.execute_unprepared("CREATE INDEX incident_partner ON incident (partner_id, started_at)")
            .await?;
        db.execute_unprepared(&format!(
            "UPDATE endpoint SET event_types = '{NEW_TYPES}' \
             WHERE kind IN ('notification', 'operator') AND event_types = '{OLD_TYPES}'"
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "UPDATE endpoint SET event_types = '{OLD_TYPES}' \
                 WHERE kind IN ('notification', 'operator') AND event_types = '{NEW_TYPES}'"
            ))
            .await?;
        manager
            .drop_table(Table::drop().table(Incident::Table).to_owned())
            .await
    }
}
