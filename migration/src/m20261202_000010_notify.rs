//! Operators and partners see and act: each partner's notification email,
//! endpoint kinds (a partner's notification URL and the operator's URL are
//! endpoints hookd manages), the mail queue that carries endpoint notices,
//! and the audit log of operator actions. Deliveries held by an endpoint
//! that is not active become `paused`.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Partner {
    Table,
    /// Where endpoint notices are mailed; NULL: no mail.
    NotificationEmail,
}

#[derive(DeriveIden)]
enum Endpoint {
    Table,
    /// `endpoint` (the partner's), `notification` (the partner's notification
    /// URL) or `operator` (`notify.operator_url`).
    Kind,
}

/// One mail per (event, audience): an endpoint notice to a partner's
/// notification email or to the operator's.
#[derive(DeriveIden)]
enum Mail {
    Table,
    Id,
    /// The operational event it tells of.
    EventId,
    PartnerId,
    /// `partner` or `operator`.
    Audience,
    Recipient,
    Subject,
    Body,
    /// `pending`, `sent` or `dead`.
    State,
    Attempts,
    NextAttemptAt,
    /// Set by the instance sending it; another may take it after this.
    LeaseUntil,
    LastError,
    CreatedAt,
    SentAt,
}

/// Who did what, when and from where, for every operator action.
#[derive(DeriveIden)]
enum Audit {
    Table,
    Id,
    At,
    /// The key that acted, by id (never the key itself).
    KeyId,
    /// `api` or `dashboard`.
    Via,
    /// e.g. `delivery.replay`, `endpoint.disable`.
    Action,
    /// The object acted on, e.g. `dlv_…`, `ep_…`.
    Target,
    /// The partner whose object it is.
    PartnerId,
    /// A JSON object with the action's details.
    Detail,
    /// The client address the request came from.
    RemoteAddr,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Partner::Table)
                    .add_column(text_null(Partner::NotificationEmail))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Endpoint::Table)
                    .add_column(text(Endpoint::Kind).default("endpoint"))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Mail::Table)
                    .col(text(Mail::Id).primary_key())
                    .col(text(Mail::EventId))
                    .col(text(Mail::PartnerId))
                    .col(text(Mail::Audience))
                    .col(text(Mail::Recipient))
                    .col(text(Mail::Subject))
                    .col(text(Mail::Body))
                    .col(text(Mail::State).default("pending"))
                    .col(integer(Mail::Attempts).default(0))
                    .col(big_integer(Mail::NextAttemptAt))
                    .col(big_integer_null(Mail::LeaseUntil))
                    .col(text_null(Mail::LastError))
                    .col(big_integer(Mail::CreatedAt))
                    .col(big_integer_null(Mail::SentAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("mail_once_per_audience")
                    .table(Mail::Table)
                    .col(Mail::EventId)
                    .col(Mail::Audience)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("mail_due")
                    .table(Mail::Table)
                    .col(Mail::State)
                    .col(Mail::NextAttemptAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Audit::Table)
                    .col(text(Audit::Id).primary_key())
                    .col(big_integer(Audit::At))
                    .col(text(Audit::KeyId))
                    .col(text(Audit::Via))
                    .col(text(Audit::Action))
                    .col(text(Audit::Target))
                    .col(text_null(Audit::PartnerId))
                    .col(text(Audit::Detail))
                    .col(text(Audit::RemoteAddr))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("audit_at")
                    .table(Audit::Table)
                    .col(Audit::At)
                    .col(Audit::Id)
                    .to_owned(),
            )
            .await?;
        // What an endpoint that is not active holds is paused, not failing.
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE delivery SET state = 'paused' WHERE state IN ('pending', 'failed') \
                 AND endpoint_id IN (SELECT id FROM endpoint WHERE status <> 'active')",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared(
                "UPDATE delivery SET state = CASE WHEN attempt_count = 0 THEN 'pending' ELSE 'failed' END \
                 WHERE state = 'paused'",
            )
            .await?;
        manager
            .drop_table(Table::drop().table(Audit::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Mail::Table).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Endpoint::Table)
                    .drop_column(Endpoint::Kind)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Partner::Table)
                    .drop_column(Partner::NotificationEmail)
                    .to_owned(),
            )
            .await?;
        Ok(())
    }
}
