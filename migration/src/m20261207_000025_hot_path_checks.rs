//! PostgreSQL only: the two foreign keys that every delivery paid for on its
//! way, checked instead by the statements that write those rows.
//!
//! A foreign key is checked per inserted row by a query that also locks the
//! parent row (`FOR KEY SHARE`, a write to the parent's page and the WAL).
//! Each delivery paid two: its row against its event when the event was
//! published, and its attempt's row against the delivery when the attempt
//! was recorded, both parents written by the same statement or transaction
//! an instant before. Measured on the bench's cluster (pgbench, five
//! deliveries per transaction), the checks were a quarter of the delivery
//! insert's time and a third of the attempt insert's.
//!
//! What the keys guarded holds without them:
//! - a delivery's event: deliveries are inserted only with their event (in
//!   its publication, or by the fanout of an unpublished event, which the
//!   retention never deletes), and the retention deletes an event only once
//!   no delivery names it;
//! - an attempt's delivery: an attempt is inserted only for a delivery the
//!   same statement (or transaction) has just updated, so locked until the
//!   commit; when deliveries are deleted (the retention, an endpoint's
//!   deletion), a statement trigger deletes their attempts, as the key's
//!   `ON DELETE CASCADE` did.
//!
//! The key from a delivery to its endpoint stays: an endpoint deleted while
//! a publication inserts its deliveries must fail the one or wait for the
//! other, and only the key's lock sees that. SQLite keeps all three (it
//! cannot drop a constraint without rebuilding the table, and checks a key
//! with an index lookup, without a lock).

use sea_orm_migration::{prelude::*, sea_orm::DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

const UP: [&str; 4] = [
    "ALTER TABLE delivery DROP CONSTRAINT IF EXISTS delivery_event_id_fkey",
    "ALTER TABLE attempt DROP CONSTRAINT IF EXISTS attempt_delivery_id_fkey",
    "CREATE OR REPLACE FUNCTION hookd_delivery_deleted() RETURNS trigger LANGUAGE plpgsql AS $$ \
     BEGIN DELETE FROM attempt WHERE delivery_id IN (SELECT id FROM gone); RETURN NULL; END $$",
    "CREATE TRIGGER delivery_deleted AFTER DELETE ON delivery REFERENCING OLD TABLE AS gone \
     FOR EACH STATEMENT EXECUTE FUNCTION hookd_delivery_deleted()",
];

const DOWN: [&str; 4] = [
    "DROP TRIGGER IF EXISTS delivery_deleted ON delivery",
    "DROP FUNCTION IF EXISTS hookd_delivery_deleted()",
    "ALTER TABLE attempt ADD CONSTRAINT attempt_delivery_id_fkey FOREIGN KEY (delivery_id) \
     REFERENCES delivery (id) ON DELETE CASCADE",
    "ALTER TABLE delivery ADD CONSTRAINT delivery_event_id_fkey FOREIGN KEY (event_id) \
     REFERENCES outbox_event (event_id)",
];

async fn run(manager: &SchemaManager<'_>, statements: &[&str]) -> Result<(), DbErr> {
    if manager.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    for statement in statements {
        manager
            .get_connection()
            .execute_unprepared(statement)
            .await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        run(manager, &UP).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        run(manager, &DOWN).await
    }
}
