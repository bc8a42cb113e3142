//! The hookd schema, one migration per change, the same on SQLite and PostgreSQL.
//!
//! Every `*_at` column is a BIGINT of Unix milliseconds in UTC: one
//! representation that both backends compare numerically, so no timestamp
//! ever depends on a text format.

pub use sea_orm_migration::prelude::*;

mod m20261130_000001_initial;
mod m20261130_000002_replay;
mod m20261130_000003_scheduled_attempts;
mod m20261130_000004_due_index;
mod m20261130_000005_outbox_notify;
mod m20261201_000006_dashboard_sessions;
mod m20261201_000007_cluster;
mod m20261202_000008_notify_unpublished;
mod m20261202_000009_contract;
mod m20261202_000010_notify;
mod m20261202_000011_portal;
mod m20261202_000012_view_indexes;
mod m20261202_000013_checks;
mod m20261205_000014_due_order;
mod m20261206_000015_trace_context;
mod m20261206_000016_receiver_auth;
mod m20261206_000017_routing;
mod m20261206_000018_dev_keys;
mod m20261206_000019_attempt_facts;
mod m20261206_000020_incidents;
mod m20261206_000021_event_time;
mod m20261206_000022_instance_role;
mod m20261206_000023_delivery_pulse;
mod m20261207_000024_record_function;
mod m20261207_000025_hot_path_checks;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261130_000001_initial::Migration),
            Box::new(m20261130_000002_replay::Migration),
            Box::new(m20261130_000003_scheduled_attempts::Migration),
            Box::new(m20261130_000004_due_index::Migration),
            Box::new(m20261130_000005_outbox_notify::Migration),
            Box::new(m20261201_000006_dashboard_sessions::Migration),
            Box::new(m20261201_000007_cluster::Migration),
            Box::new(m20261202_000008_notify_unpublished::Migration),
            Box::new(m20261202_000009_contract::Migration),
            Box::new(m20261202_000010_notify::Migration),
            Box::new(m20261202_000011_portal::Migration),
            Box::new(m20261202_000012_view_indexes::Migration),
            Box::new(m20261202_000013_checks::Migration),
            Box::new(m20261205_000014_due_order::Migration),
            Box::new(m20261206_000015_trace_context::Migration),
            Box::new(m20261206_000016_receiver_auth::Migration),
            Box::new(m20261206_000017_routing::Migration),
            Box::new(m20261206_000018_dev_keys::Migration),
            Box::new(m20261206_000019_attempt_facts::Migration),
            Box::new(m20261206_000020_incidents::Migration),
            Box::new(m20261206_000021_event_time::Migration),
            Box::new(m20261206_000022_instance_role::Migration),
            Box::new(m20261206_000023_delivery_pulse::Migration),
            Box::new(m20261207_000024_record_function::Migration),
            Box::new(m20261207_000025_hot_path_checks::Migration),
        ]
    }
}
