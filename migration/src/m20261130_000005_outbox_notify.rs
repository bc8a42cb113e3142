//! PostgreSQL only: every statement that inserts into `outbox_event` sends a
//! NOTIFY on `hookd_outbox`, which PostgreSQL delivers when the transaction
//! commits (and never for one that rolls back). hookd LISTENs and fans out at
//! once, whichever process or language wrote the event. SQLite has no such
//! channel; there the poll is the cross-process wake.

use sea_orm_migration::{prelude::*, sea_orm::DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE OR REPLACE FUNCTION hookd_outbox_notify() RETURNS trigger \
             LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('hookd_outbox', ''); RETURN NULL; END $$",
        )
        .await?;
        db.execute_unprepared(
            "CREATE TRIGGER outbox_event_notify AFTER INSERT ON outbox_event \
             FOR EACH STATEMENT EXECUTE FUNCTION hookd_outbox_notify()",
        )
        .await
        .map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared("DROP TRIGGER IF EXISTS outbox_event_notify ON outbox_event")
            .await?;
        db.execute_unprepared("DROP FUNCTION IF EXISTS hookd_outbox_notify()")
            .await
            .map(|_| ())
    }
}
