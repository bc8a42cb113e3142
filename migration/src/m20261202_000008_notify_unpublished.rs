//! PostgreSQL only: the `hookd_outbox` NOTIFY (migration 5) goes out only for
//! a statement that inserted an event still to be published. Events stored by
//! hookd's fast path are published in their own transaction; waking every
//! instance's fanout for them made each ingest commit cost an empty fanout
//! transaction.

use sea_orm_migration::{prelude::*, sea_orm::DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

const NOTIFY_UNPUBLISHED: &str = "CREATE OR REPLACE FUNCTION hookd_outbox_notify() RETURNS trigger \
     LANGUAGE plpgsql AS $$ BEGIN \
       IF EXISTS (SELECT 1 FROM inserted WHERE published_at IS NULL) THEN \
         PERFORM pg_notify('hookd_outbox', ''); \
       END IF; \
       RETURN NULL; \
     END $$";

const NOTIFY_ALWAYS: &str = "CREATE OR REPLACE FUNCTION hookd_outbox_notify() RETURNS trigger \
     LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('hookd_outbox', ''); RETURN NULL; END $$";

/// Replaces the notify function and the trigger that calls it.
async fn replace(manager: &SchemaManager<'_>, function: &str, trigger: &str) -> Result<(), DbErr> {
    if manager.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    let db = manager.get_connection();
    db.execute_unprepared("DROP TRIGGER IF EXISTS outbox_event_notify ON outbox_event")
        .await?;
    db.execute_unprepared(function).await?;
    db.execute_unprepared(trigger).await.map(|_| ())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let trigger = "CREATE TRIGGER outbox_event_notify AFTER INSERT ON outbox_event \
             REFERENCING NEW TABLE AS inserted \
             FOR EACH STATEMENT EXECUTE FUNCTION hookd_outbox_notify()";
        replace(manager, NOTIFY_UNPUBLISHED, trigger).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let trigger = "CREATE TRIGGER outbox_event_notify AFTER INSERT ON outbox_event \
             FOR EACH STATEMENT EXECUTE FUNCTION hookd_outbox_notify()";
        replace(manager, NOTIFY_ALWAYS, trigger).await
    }
}
