//! Attempts that keep their facts: the URL each was sent to and the
//! `Location` its receiver answered with (both redacted of credentials and
//! capped), and the retry it scheduled. Attempts recorded before have none.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Attempt {
    Table,
    /// The endpoint's URL when the attempt was sent, redacted.
    Url,
    /// When the retry this attempt scheduled is due (Unix ms); null when it
    /// was the last, succeeded, or was a manual replay.
    NextAttemptAt,
    /// A 3xx answer's `Location`, redacted.
    Location,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            text_null(Attempt::Url),
            big_integer_null(Attempt::NextAttemptAt),
            text_null(Attempt::Location),
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Attempt::Table)
                        .add_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Attempt::Url, Attempt::NextAttemptAt, Attempt::Location] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Attempt::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
