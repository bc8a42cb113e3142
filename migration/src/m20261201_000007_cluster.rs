//! The cluster: instances that heartbeat, the lease of each endpoint (owner
//! and epoch), the circuit kept on the endpoint row so it outlives an actor,
//! and a claim sequence on deliveries and replays that fences late records.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Instance::Table)
                    .col(string(Instance::Id).primary_key())
                    .col(string(Instance::Host))
                    .col(big_integer(Instance::Pid))
                    .col(string(Instance::Version))
                    .col(string(Instance::Listen))
                    .col(big_integer(Instance::StartedAt))
                    .col(big_integer(Instance::HeartbeatAt))
                    .col(integer(Instance::InFlight).default(0))
                    .col(integer(Instance::Actors).default(0))
                    .col(boolean(Instance::Draining).default(false))
                    .to_owned(),
            )
            .await?;
        // SQLite alters one column per statement.
        let columns = [
            (
                Endpoint::Table,
                ColumnDef::new(Endpoint::LeaseOwner)
                    .string()
                    .null()
                    .to_owned(),
            ),
            (
                Endpoint::Table,
                big_integer(Endpoint::LeaseEpoch).default(0).to_owned(),
            ),
            (
                Endpoint::Table,
                integer(Endpoint::CircuitFailures).default(0).to_owned(),
            ),
            (
                Endpoint::Table,
                ColumnDef::new(Endpoint::CircuitOpenUntil)
                    .big_integer()
                    .null()
                    .to_owned(),
            ),
            (
                Endpoint::Table,
                ColumnDef::new(Endpoint::CircuitCooldownMs)
                    .big_integer()
                    .null()
                    .to_owned(),
            ),
            (
                Endpoint::Delivery,
                big_integer(Endpoint::ClaimSeq).default(0).to_owned(),
            ),
            (
                Endpoint::Replay,
                big_integer(Endpoint::ClaimSeq).default(0).to_owned(),
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
            .create_index(
                Index::create()
                    .name("endpoint_lease_owner")
                    .table(Endpoint::Table)
                    .col(Endpoint::LeaseOwner)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("endpoint_lease_owner")
                    .table(Endpoint::Table)
                    .to_owned(),
            )
            .await?;
        let columns = [
            (Endpoint::Table, Endpoint::LeaseOwner),
            (Endpoint::Table, Endpoint::LeaseEpoch),
            (Endpoint::Table, Endpoint::CircuitFailures),
            (Endpoint::Table, Endpoint::CircuitOpenUntil),
            (Endpoint::Table, Endpoint::CircuitCooldownMs),
            (Endpoint::Delivery, Endpoint::ClaimSeq),
            (Endpoint::Replay, Endpoint::ClaimSeq),
        ];
        for (table, column) in columns {
            manager
                .alter_table(Table::alter().table(table).drop_column(column).to_owned())
                .await?;
        }
        manager
            .drop_table(Table::drop().table(Instance::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Instance {
    Table,
    Id,
    Host,
    Pid,
    Version,
    Listen,
    StartedAt,
    HeartbeatAt,
    InFlight,
    Actors,
    Draining,
}

/// The endpoint's new columns, and the two tables that gain a claim sequence.
#[derive(DeriveIden, Clone, Copy)]
enum Endpoint {
    Table,
    Delivery,
    Replay,
    LeaseOwner,
    LeaseEpoch,
    CircuitFailures,
    CircuitOpenUntil,
    CircuitCooldownMs,
    ClaimSeq,
}
