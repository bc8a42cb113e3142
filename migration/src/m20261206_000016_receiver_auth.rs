//! How an endpoint proves itself to its receiver beyond the HMAC signature:
//! signing keys get a scheme (`v1` HMAC or `v1a` Ed25519, whose public key is
//! kept in the clear to publish), and each endpoint may hold receiver
//! credentials: static headers, OAuth2 client credentials and a TLS client
//! certificate. Every secret part is sealed like signing secrets.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Endpoint {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum EndpointSecret {
    Table,
    /// `v1` (HMAC-SHA256) or `v1a` (Ed25519).
    Scheme,
    /// `whpk_…` for a `v1a` key; null for `v1`.
    PublicKey,
}

/// One endpoint's receiver credentials (a row only once any is set).
#[derive(DeriveIden)]
enum EndpointAuth {
    Table,
    EndpointId,
    /// A JSON array of the static header names, in the clear.
    HeaderNames,
    /// The header names and values as sealed JSON.
    HeadersSealed,
    OauthTokenUrl,
    OauthClientId,
    OauthScope,
    OauthAudience,
    OauthSecretSealed,
    /// The client certificate chain (PEM; public).
    CertPem,
    CertSubject,
    CertNotAfter,
    CertKeySealed,
    /// When the owner was last warned that the certificate expires.
    CertWarnedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(EndpointSecret::Table)
                    .add_column(string(EndpointSecret::Scheme).default("v1"))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(EndpointSecret::Table)
                    .add_column(text_null(EndpointSecret::PublicKey))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(EndpointAuth::Table)
                    .col(string(EndpointAuth::EndpointId).primary_key())
                    .col(text_null(EndpointAuth::HeaderNames))
                    .col(text_null(EndpointAuth::HeadersSealed))
                    .col(text_null(EndpointAuth::OauthTokenUrl))
                    .col(text_null(EndpointAuth::OauthClientId))
                    .col(text_null(EndpointAuth::OauthScope))
                    .col(text_null(EndpointAuth::OauthAudience))
                    .col(text_null(EndpointAuth::OauthSecretSealed))
                    .col(text_null(EndpointAuth::CertPem))
                    .col(text_null(EndpointAuth::CertSubject))
                    .col(big_integer_null(EndpointAuth::CertNotAfter))
                    .col(text_null(EndpointAuth::CertKeySealed))
                    .col(big_integer_null(EndpointAuth::CertWarnedAt))
                    .col(big_integer(EndpointAuth::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(EndpointAuth::Table, EndpointAuth::EndpointId)
                            .to(Endpoint::Table, Endpoint::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(EndpointAuth::Table).to_owned())
            .await?;
        for column in [EndpointSecret::PublicKey, EndpointSecret::Scheme] {
            manager
                .alter_table(
                    Table::alter()
                        .table(EndpointSecret::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
