//! Endpoints and their secrets. Partner-facing reads start from the partner id;
//! the delivery path reads an endpoint by id only after the fanout chose it.

use std::collections::BTreeMap;

use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    TransactionTrait, Value,
};

use super::{
    StoreError,
    entity::{endpoint, endpoint_secret},
    sql,
};
use crate::{
    domain::{
        circuit::Saved,
        filter::Filter,
        ids::new_id,
        ordering::{OnDead, Ordering},
    },
    secret::{Secret, SecretBox},
    signing::{Scheme, SigningKey},
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointStatus {
    Active,
    Paused,
    Disabled,
}

impl EndpointStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointStatus::Active => "active",
            EndpointStatus::Paused => "paused",
            EndpointStatus::Disabled => "disabled",
        }
    }
    pub fn parse(s: &str) -> Option<EndpointStatus> {
        [
            EndpointStatus::Active,
            EndpointStatus::Paused,
            EndpointStatus::Disabled,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

/// Whose an endpoint is and who manages it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A partner's own, managed through the endpoints API.
    Endpoint,
    /// A partner's notification URL (`PATCH /v1/partner`): it receives the
    /// partner's `endpoint.*` and `hookd.*` notices and is never disabled by failures.
    Notification,
    /// The operator's URL (`notify.operator_url`): every partner's notices.
    Operator,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Endpoint => "endpoint",
            Kind::Notification => "notification",
            Kind::Operator => "operator",
        }
    }
    pub fn parse(s: &str) -> Option<Kind> {
        [Kind::Endpoint, Kind::Notification, Kind::Operator]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub id: String,
    pub partner_id: String,
    pub url: String,
    pub description: String,
    pub status: EndpointStatus,
    pub disabled_reason: Option<String>,
    pub event_types: Vec<String>,
    pub schema_version: Option<String>,
    /// Event type → the version this endpoint receives it at (absent: as
    /// the producer sent it).
    pub schema_versions: BTreeMap<String, u32>,
    pub concurrency: u32,
    pub rate_limit: Option<u32>,
    pub failing_since: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub kind: Kind,
    pub ordering: Ordering,
    pub on_dead: OnDead,
    /// Only events that pass it get a delivery.
    pub filter: Option<Filter>,
}

impl TryFrom<endpoint::Model> for Endpoint {
    type Error = StoreError;
    fn try_from(m: endpoint::Model) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("endpoint {}: {what}", m.id));
        Ok(Endpoint {
            status: EndpointStatus::parse(&m.status).ok_or_else(|| corrupt("status"))?,
            kind: Kind::parse(&m.kind).ok_or_else(|| corrupt("kind"))?,
            ordering: Ordering::parse(&m.ordering).ok_or_else(|| corrupt("ordering"))?,
            on_dead: OnDead::parse(&m.ordering_on_dead)
                .ok_or_else(|| corrupt("ordering_on_dead"))?,
            filter: filter_from_text(m.filter.as_deref())
                .map_err(|e| corrupt(&format!("filter {e}")))?,
            event_types: serde_json::from_str(&m.event_types)
                .map_err(|_| corrupt("event_types"))?,
            schema_versions: pins_from_text(m.schema_versions.as_deref())
                .map_err(|_| corrupt("schema_versions"))?,
            concurrency: u32::try_from(m.concurrency).map_err(|_| corrupt("concurrency"))?,
            rate_limit: m.rate_limit.and_then(|r| u32::try_from(r).ok()),
            id: m.id,
            partner_id: m.partner_id,
            url: m.url,
            description: m.description,
            disabled_reason: m.disabled_reason,
            schema_version: m.schema_version,
            failing_since: m.failing_since,
            created_at: m.created_at,
            updated_at: m.updated_at,
        })
    }
}

/// A new endpoint, its URL already checked.
#[derive(Debug, Clone)]
pub struct NewEndpoint {
    pub partner_id: String,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub schema_version: Option<String>,
    pub schema_versions: BTreeMap<String, u32>,
    pub concurrency: u32,
    pub rate_limit: Option<u32>,
    pub status: EndpointStatus,
    pub ordering: Ordering,
    pub on_dead: OnDead,
    pub filter: Option<Filter>,
}

/// A stored filter, read back (`None`: no filter).
pub fn filter_from_text(text: Option<&str>) -> Result<Option<Filter>, String> {
    let Some(text) = text else {
        return Ok(None);
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Filter::parse(&value).map(Some).map_err(|e| e.to_string())
}

/// A filter as stored.
pub fn filter_to_text(filter: Option<&Filter>) -> Option<String> {
    filter.map(|f| f.to_json().to_string())
}

/// An endpoint's pinned versions as stored (`None` when there are none).
pub fn pins_to_text(pins: &BTreeMap<String, u32>) -> Option<String> {
    (!pins.is_empty()).then(|| serde_json::to_string(pins).unwrap_or_else(|_| "{}".into()))
}

/// An endpoint's pinned versions from their stored text.
pub fn pins_from_text(text: Option<&str>) -> Result<BTreeMap<String, u32>, serde_json::Error> {
    text.map_or(Ok(BTreeMap::new()), serde_json::from_str)
}

/// Creates the endpoint and its first signing key together; the key's
/// `whsec_` secret or `whpk_` public key is shown once (`SigningKey::shown`).
pub async fn create(
    db: &sea_orm::DatabaseConnection,
    secrets: &SecretBox,
    new: NewEndpoint,
    scheme: Scheme,
    now_ms: i64,
) -> Result<(Endpoint, SigningKey), StoreError> {
    let seed = Secret::generate();
    let key = signing_key(scheme, seed.clone())?;
    let endpoint = insert(db, secrets, new, Kind::Endpoint, (&seed, &key), now_ms).await?;
    Ok((endpoint, key))
}

/// Creates an endpoint of `kind` signing with the `v1` `secret`.
pub async fn create_of_kind(
    db: &sea_orm::DatabaseConnection,
    secrets: &SecretBox,
    new: NewEndpoint,
    kind: Kind,
    secret: &Secret,
    now_ms: i64,
) -> Result<Endpoint, StoreError> {
    let key = SigningKey::Hmac(secret.clone());
    insert(db, secrets, new, kind, (secret, &key), now_ms).await
}

fn signing_key(scheme: Scheme, seed: Secret) -> Result<SigningKey, StoreError> {
    SigningKey::from_stored(scheme, seed).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The row of a new signing key: its sealed secret (or seed), its scheme
/// and, for `v1a`, its public key in the clear.
pub(super) fn secret_row(
    secrets: &SecretBox,
    endpoint_id: &str,
    (stored, key): (&Secret, &SigningKey),
    created_at: i64,
) -> endpoint_secret::ActiveModel {
    endpoint_secret::ActiveModel {
        id: Set(new_id("sec")),
        endpoint_id: Set(endpoint_id.to_string()),
        ciphertext: Set(secrets.seal(endpoint_id, stored)),
        created_at: Set(created_at),
        expires_at: Set(None),
        scheme: Set(key.scheme().as_str().into()),
        public_key: Set(key.public_key()),
    }
}

async fn insert(
    db: &sea_orm::DatabaseConnection,
    secrets: &SecretBox,
    new: NewEndpoint,
    kind: Kind,
    key: (&Secret, &SigningKey),
    now_ms: i64,
) -> Result<Endpoint, StoreError> {
    let id = new_id("ep");
    let txn = db.begin().await?;
    let row = endpoint::Entity::insert(endpoint::ActiveModel {
        id: Set(id.clone()),
        partner_id: Set(new.partner_id),
        url: Set(new.url),
        description: Set(new.description),
        status: Set(new.status.as_str().into()),
        disabled_reason: Set(None),
        event_types: Set(serde_json::to_string(&new.event_types).unwrap_or_else(|_| "[]".into())),
        schema_version: Set(new.schema_version),
        schema_versions: Set(pins_to_text(&new.schema_versions)),
        concurrency: Set(i32::try_from(new.concurrency).unwrap_or(i32::MAX)),
        rate_limit: Set(new.rate_limit.map(|r| i32::try_from(r).unwrap_or(i32::MAX))),
        failing_since: Set(None),
        warned_at: Set(None),
        created_at: Set(now_ms),
        updated_at: Set(now_ms),
        kind: Set(kind.as_str().into()),
        ordering: Set(new.ordering.as_str().into()),
        ordering_on_dead: Set(new.on_dead.as_str().into()),
        filter: Set(filter_to_text(new.filter.as_ref())),
    })
    .exec_with_returning(&txn)
    .await?;
    endpoint_secret::Entity::insert(secret_row(secrets, &id, key, now_ms))
        .exec_without_returning(&txn)
        .await?;
    txn.commit().await?;
    row.try_into()
}

/// One endpoint of one partner.
pub async fn find_for_partner(
    db: &impl ConnectionTrait,
    partner_id: &str,
    id: &str,
) -> Result<Option<Endpoint>, StoreError> {
    endpoint::Entity::find_by_id(id.to_string())
        .filter(endpoint::Column::PartnerId.eq(partner_id))
        .one(db)
        .await?
        .map(Endpoint::try_from)
        .transpose()
}

/// An endpoint by id, for the delivery path (which got the id from a delivery row).
pub async fn find_for_delivery(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<Endpoint>, StoreError> {
    endpoint::Entity::find_by_id(id.to_string())
        .one(db)
        .await?
        .map(Endpoint::try_from)
        .transpose()
}

/// The keys that sign now, newest first; expired ones are left out.
pub async fn signing_keys(
    db: &impl ConnectionTrait,
    secrets: &SecretBox,
    endpoint_id: &str,
    now_ms: i64,
) -> Result<Vec<SigningKey>, StoreError> {
    current_secrets(db, endpoint_id, now_ms)
        .await?
        .into_iter()
        .map(|r| {
            let corrupt = |e: &dyn std::fmt::Display| {
                StoreError::Corrupt(format!("secret {} of endpoint {endpoint_id}: {e}", r.id))
            };
            let scheme = Scheme::parse(&r.scheme).ok_or_else(|| corrupt(&"unknown scheme"))?;
            let secret = secrets
                .open(endpoint_id, &r.ciphertext)
                .map_err(|e| corrupt(&e))?;
            SigningKey::from_stored(scheme, secret).map_err(|e| corrupt(&e))
        })
        .collect()
}

/// The `whpk_` public keys that sign now (`v1a`), newest first, with when
/// each stops signing: what an endpoint publishes. Nothing is decrypted.
pub async fn public_keys(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    now_ms: i64,
) -> Result<Vec<(String, Option<i64>)>, StoreError> {
    Ok(signing(db, endpoint_id, now_ms)
        .await?
        .into_iter()
        .filter_map(|k| Some((k.public_key?, k.expires_at)))
        .collect())
}

/// What is shown of a key that signs now: nothing secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningShown {
    /// `v1` or `v1a`.
    pub scheme: String,
    /// The `whpk_` public key of a `v1a` key.
    pub public_key: Option<String>,
    /// When it stops signing; `None` while it is the current key.
    pub expires_at: Option<i64>,
}

/// The keys that sign now, newest first, as shown. Nothing is decrypted.
pub async fn signing(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    now_ms: i64,
) -> Result<Vec<SigningShown>, StoreError> {
    Ok(current_secrets(db, endpoint_id, now_ms)
        .await?
        .into_iter()
        .map(|r| SigningShown {
            scheme: r.scheme,
            public_key: r.public_key,
            expires_at: r.expires_at,
        })
        .collect())
}

async fn current_secrets(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    now_ms: i64,
) -> Result<Vec<endpoint_secret::Model>, StoreError> {
    let rows = endpoint_secret::Entity::find()
        .filter(endpoint_secret::Column::EndpointId.eq(endpoint_id))
        .order_by_desc(endpoint_secret::Column::CreatedAt)
        .order_by_desc(endpoint_secret::Column::Id)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .filter(|r| r.expires_at.is_none_or(|t| t > now_ms))
        .collect())
}

/// Disables an endpoint with a reason the partner sees.
pub async fn disable(
    db: &sea_orm::DatabaseConnection,
    id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let txn = db.begin().await?;
    let res = txn
        .execute_raw(sql(
            db.get_database_backend(),
            "UPDATE endpoint SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE id = ? AND status <> 'disabled'",
            vec![Value::from(reason), now_ms.into(), id.into()],
        ))
        .await?;
    super::paused::pause(&txn, id, now_ms).await?;
    txn.commit().await?;
    Ok(res.rows_affected() == 1)
}

/// Active endpoints with a delivery or replay due by `now_ms`: pending or
/// failed rows whose time has come, and rows whose lease ran out (an
/// instance died mid-attempt). The supervisor's poll wakes their actors.
pub async fn with_due_work(
    db: &impl ConnectionTrait,
    now_ms: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(super::query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT e.id FROM endpoint e WHERE e.status = 'active' AND (\
               EXISTS (SELECT 1 FROM delivery d WHERE d.endpoint_id = e.id \
                 AND d.state IN ('pending', 'failed', 'delivering') AND d.next_attempt_at <= ?) \
               OR EXISTS (SELECT 1 FROM replay r WHERE r.endpoint_id = e.id AND r.next_attempt_at <= ?))",
            vec![now_ms.into(), now_ms.into()],
        ),
        |r| r.try_get::<String>("", "id"),
    )
    .await?)
}

/// Writes endpoints' circuits, each only while the lease it was decided
/// under (`epoch`) still stands.
pub async fn save_circuits(
    db: &impl ConnectionTrait,
    circuits: &[(&str, i64, Saved)],
) -> Result<(), StoreError> {
    for (endpoint_id, epoch, saved) in circuits {
        db.execute_raw(sql(
            db.get_database_backend(),
            "UPDATE endpoint SET circuit_failures = ?, circuit_open_until = ?, circuit_cooldown_ms = ? \
             WHERE id = ? AND lease_epoch = ?",
            vec![
                (saved.consecutive_failures.min(i32::MAX as u32) as i32).into(),
                saved.open_until_ms.into(),
                saved.cooldown_ms.into(),
                (*endpoint_id).into(),
                (*epoch).into(),
            ],
        ))
        .await?;
    }
    Ok(())
}

/// The circuit kept on the endpoint's row.
pub async fn saved_circuit(db: &impl ConnectionTrait, id: &str) -> Result<Saved, StoreError> {
    let row = db
        .query_one_raw(sql(
            db.get_database_backend(),
            "SELECT circuit_failures, circuit_open_until, circuit_cooldown_ms FROM endpoint WHERE id = ?",
            vec![id.into()],
        ))
        .await?;
    Ok(match row {
        Some(r) => circuit_of(&r)?,
        None => Saved::default(),
    })
}

/// The circuit of a row with the endpoint's `circuit_failures`,
/// `circuit_open_until` and `circuit_cooldown_ms` columns.
pub(crate) fn circuit_of(r: &sea_orm::QueryResult) -> Result<Saved, sea_orm::DbErr> {
    Ok(Saved {
        consecutive_failures: u32::try_from(r.try_get::<i32>("", "circuit_failures")?).unwrap_or(0),
        open_until_ms: r.try_get("", "circuit_open_until")?,
        cooldown_ms: r.try_get("", "circuit_cooldown_ms")?,
    })
}
