//! The initial schema: partners, keys, endpoints and their secrets, the outbox,
//! deliveries and attempts, and the feed counter that orders publishers.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in tables() {
            manager.create_table(table).await?;
        }
        for index in indexes() {
            manager.create_index(index).await?;
        }
        // The single counter row; publishers take its row lock inside their
        // transaction, so feed positions follow commit order.
        manager
            .exec_stmt(
                Query::insert()
                    .into_table(FeedCounter::Table)
                    .columns([FeedCounter::Id, FeedCounter::Value])
                    .values_panic([1.into(), 0i64.into()])
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            Attempt::Table.into_iden(),
            Delivery::Table.into_iden(),
            FeedCounter::Table.into_iden(),
            OutboxEvent::Table.into_iden(),
            EndpointSecret::Table.into_iden(),
            Endpoint::Table.into_iden(),
            ApiKey::Table.into_iden(),
            Partner::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

fn id(col: impl IntoIden) -> ColumnDef {
    string(col).primary_key().take()
}

fn tables() -> Vec<TableCreateStatement> {
    vec![
        Table::create()
            .table(Partner::Table)
            .col(id(Partner::Id))
            .col(string(Partner::Name))
            .col(string(Partner::Status))
            .col(big_integer(Partner::CreatedAt))
            .to_owned(),
        Table::create()
            .table(ApiKey::Table)
            .col(id(ApiKey::Id))
            .col(string_null(ApiKey::PartnerId))
            .col(string_uniq(ApiKey::Prefix))
            .col(string(ApiKey::Hash))
            .col(string(ApiKey::Role))
            .col(big_integer(ApiKey::CreatedAt))
            .col(big_integer_null(ApiKey::LastUsedAt))
            .col(big_integer_null(ApiKey::RevokedAt))
            .foreign_key(
                ForeignKey::create()
                    .from(ApiKey::Table, ApiKey::PartnerId)
                    .to(Partner::Table, Partner::Id),
            )
            .to_owned(),
        Table::create()
            .table(Endpoint::Table)
            .col(id(Endpoint::Id))
            .col(string(Endpoint::PartnerId))
            .col(text(Endpoint::Url))
            .col(text(Endpoint::Description))
            .col(string(Endpoint::Status))
            .col(text_null(Endpoint::DisabledReason))
            .col(text(Endpoint::EventTypes))
            .col(string_null(Endpoint::SchemaVersion))
            .col(integer(Endpoint::Concurrency))
            .col(integer_null(Endpoint::RateLimit))
            .col(big_integer_null(Endpoint::FailingSince))
            .col(big_integer_null(Endpoint::WarnedAt))
            .col(big_integer(Endpoint::CreatedAt))
            .col(big_integer(Endpoint::UpdatedAt))
            .foreign_key(
                ForeignKey::create()
                    .from(Endpoint::Table, Endpoint::PartnerId)
                    .to(Partner::Table, Partner::Id),
            )
            .to_owned(),
        Table::create()
            .table(EndpointSecret::Table)
            .col(id(EndpointSecret::Id))
            .col(string(EndpointSecret::EndpointId))
            .col(text(EndpointSecret::Ciphertext))
            .col(big_integer(EndpointSecret::CreatedAt))
            .col(big_integer_null(EndpointSecret::ExpiresAt))
            .foreign_key(
                ForeignKey::create()
                    .from(EndpointSecret::Table, EndpointSecret::EndpointId)
                    .to(Endpoint::Table, Endpoint::Id)
                    .on_delete(ForeignKeyAction::Cascade),
            )
            .to_owned(),
        Table::create()
            .table(OutboxEvent::Table)
            .col(id(OutboxEvent::EventId))
            .col(string(OutboxEvent::PartnerId))
            .col(string(OutboxEvent::Type))
            .col(string_null(OutboxEvent::SubjectType))
            .col(string_null(OutboxEvent::SubjectId))
            .col(big_integer_null(OutboxEvent::SubjectVersion))
            .col(big_integer(OutboxEvent::OccurredAt))
            .col(string(OutboxEvent::SchemaVersion))
            .col(text(OutboxEvent::Payload))
            .col(string_null(OutboxEvent::CorrelationId))
            .col(big_integer(OutboxEvent::CreatedAt))
            .col(big_integer_null(OutboxEvent::PublishedAt))
            .col(big_integer_null(OutboxEvent::FeedSeq).unique_key())
            .to_owned(),
        Table::create()
            .table(FeedCounter::Table)
            .col(integer(FeedCounter::Id).primary_key())
            .col(big_integer(FeedCounter::Value))
            .to_owned(),
        Table::create()
            .table(Delivery::Table)
            .col(id(Delivery::Id))
            .col(string(Delivery::EventId))
            .col(string(Delivery::EndpointId))
            .col(string(Delivery::State))
            .col(integer(Delivery::AttemptCount))
            .col(big_integer(Delivery::NextAttemptAt))
            .col(integer_null(Delivery::LastStatus))
            .col(integer_null(Delivery::LastLatencyMs))
            .col(string_null(Delivery::LastErrorCategory))
            .col(big_integer(Delivery::CreatedAt))
            .col(big_integer(Delivery::UpdatedAt))
            .foreign_key(
                ForeignKey::create()
                    .from(Delivery::Table, Delivery::EventId)
                    .to(OutboxEvent::Table, OutboxEvent::EventId),
            )
            .foreign_key(
                ForeignKey::create()
                    .from(Delivery::Table, Delivery::EndpointId)
                    .to(Endpoint::Table, Endpoint::Id)
                    .on_delete(ForeignKeyAction::Cascade),
            )
            .to_owned(),
        Table::create()
            .table(Attempt::Table)
            .col(id(Attempt::Id))
            .col(string(Attempt::DeliveryId))
            .col(integer(Attempt::AttemptNo))
            .col(string(Attempt::Trigger))
            .col(big_integer(Attempt::StartedAt))
            .col(integer_null(Attempt::LatencyMs))
            .col(integer_null(Attempt::StatusCode))
            .col(string_null(Attempt::ErrorCategory))
            .col(text_null(Attempt::ErrorDetail))
            .col(text_null(Attempt::ResponseExcerpt))
            .col(string_null(Attempt::RemoteAddr))
            .foreign_key(
                ForeignKey::create()
                    .from(Attempt::Table, Attempt::DeliveryId)
                    .to(Delivery::Table, Delivery::Id)
                    .on_delete(ForeignKeyAction::Cascade),
            )
            .to_owned(),
    ]
}

fn indexes() -> Vec<IndexCreateStatement> {
    vec![
        Index::create()
            .name("api_key_partner")
            .table(ApiKey::Table)
            .col(ApiKey::PartnerId)
            .to_owned(),
        Index::create()
            .name("endpoint_partner_status")
            .table(Endpoint::Table)
            .col(Endpoint::PartnerId)
            .col(Endpoint::Status)
            .to_owned(),
        Index::create()
            .name("endpoint_secret_endpoint")
            .table(EndpointSecret::Table)
            .col(EndpointSecret::EndpointId)
            .to_owned(),
        // The fanout's claim: unpublished events in arrival order.
        Index::create()
            .name("outbox_event_unpublished")
            .table(OutboxEvent::Table)
            .col(OutboxEvent::PublishedAt)
            .col(OutboxEvent::CreatedAt)
            .to_owned(),
        // The partner's feed, read by cursor.
        Index::create()
            .name("outbox_event_partner_feed")
            .table(OutboxEvent::Table)
            .col(OutboxEvent::PartnerId)
            .col(OutboxEvent::FeedSeq)
            .to_owned(),
        Index::create()
            .name("delivery_event_endpoint")
            .table(Delivery::Table)
            .col(Delivery::EventId)
            .col(Delivery::EndpointId)
            .unique()
            .to_owned(),
        // An endpoint actor's claim: its due work in due order.
        Index::create()
            .name("delivery_endpoint_due")
            .table(Delivery::Table)
            .col(Delivery::EndpointId)
            .col(Delivery::State)
            .col(Delivery::NextAttemptAt)
            .to_owned(),
        Index::create()
            .name("attempt_delivery")
            .table(Attempt::Table)
            .col(Attempt::DeliveryId)
            .col(Attempt::AttemptNo)
            .to_owned(),
    ]
}

#[derive(DeriveIden)]
enum Partner {
    Table,
    Id,
    Name,
    Status,
    CreatedAt,
}

#[derive(DeriveIden)]
enum ApiKey {
    Table,
    Id,
    PartnerId,
    Prefix,
    Hash,
    Role,
    CreatedAt,
    LastUsedAt,
    RevokedAt,
}

#[derive(DeriveIden)]
enum Endpoint {
    Table,
    Id,
    PartnerId,
    Url,
    Description,
    Status,
    DisabledReason,
    EventTypes,
    SchemaVersion,
    Concurrency,
    RateLimit,
    FailingSince,
    WarnedAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum EndpointSecret {
    Table,
    Id,
    EndpointId,
    Ciphertext,
    CreatedAt,
    ExpiresAt,
}

#[derive(DeriveIden)]
enum OutboxEvent {
    Table,
    EventId,
    PartnerId,
    Type,
    SubjectType,
    SubjectId,
    SubjectVersion,
    OccurredAt,
    SchemaVersion,
    Payload,
    CorrelationId,
    CreatedAt,
    PublishedAt,
    FeedSeq,
}

#[derive(DeriveIden)]
enum FeedCounter {
    Table,
    Id,
    Value,
}

#[derive(DeriveIden)]
enum Delivery {
    Table,
    Id,
    EventId,
    EndpointId,
    State,
    AttemptCount,
    NextAttemptAt,
    LastStatus,
    LastLatencyMs,
    LastErrorCategory,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
#[allow(clippy::enum_variant_names)]
enum Attempt {
    Table,
    Id,
    DeliveryId,
    AttemptNo,
    Trigger,
    StartedAt,
    LatencyMs,
    StatusCode,
    ErrorCategory,
    ErrorDetail,
    ResponseExcerpt,
    RemoteAddr,
}
