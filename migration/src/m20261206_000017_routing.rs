//! Routing per endpoint: ordered delivery per subject and a filter on the
//! payload. An ordered endpoint's deliveries carry their subject
//! (`ordering_key`) and their event's feed position (`ordering_seq`); the
//! subject's head is due like any delivery, the ones behind it are
//! `waiting`, and a dead head of an endpoint that holds on death keeps
//! `holding` set until it is replayed or skipped.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Endpoint {
    Table,
    /// `none` or `subject`.
    Ordering,
    /// `skip` or `hold`: what a dead head of a subject does.
    OrderingOnDead,
    /// The filter as JSON; null for none.
    Filter,
}

#[derive(DeriveIden)]
enum Delivery {
    Table,
    OrderingKey,
    OrderingSeq,
    Holding,
}

/// The rows of a subject that can hold it up (the ordering queries repeat
/// this list word for word, so that both databases use the index).
const SUBJECT_ROWS: &str = "CREATE INDEX delivery_subject ON delivery (endpoint_id, ordering_key, ordering_seq) \
     WHERE state IN ('waiting', 'pending', 'failed', 'delivering', 'paused', 'dead')";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            string(Endpoint::Ordering).default("none").take(),
            string(Endpoint::OrderingOnDead).default("skip").take(),
            text_null(Endpoint::Filter),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Endpoint::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        for column in [
            text_null(Delivery::OrderingKey),
            big_integer_null(Delivery::OrderingSeq),
            integer(Delivery::Holding).default(0).take(),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Delivery::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .get_connection()
            .execute_unprepared(SUBJECT_ROWS)
            .await
            .map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP INDEX delivery_subject")
            .await?;
        for column in [
            Delivery::Holding,
            Delivery::OrderingSeq,
            Delivery::OrderingKey,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Delivery::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        for column in [
            Endpoint::Filter,
            Endpoint::OrderingOnDead,
            Endpoint::Ordering,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Endpoint::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
