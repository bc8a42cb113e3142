//! What `/v1/endpoints` reads and answers: the endpoint as shown, the
//! bodies of create, update, rotate and recover, and their answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::time;
use crate::{
    domain::ordering::{OnDead, Ordering},
    signing::{Scheme, SigningKey},
    store::endpoints::Endpoint,
};

/// An endpoint. Its secret is never shown here.
#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointOut {
    pub id: String,
    pub url: String,
    pub description: String,
    /// `active`, `paused` or `disabled`.
    pub status: String,
    pub disabled_reason: Option<String>,
    /// Subscribed types (`usage.*` matches a family); empty means all.
    pub event_types: Vec<String>,
    pub schema_version: Option<String>,
    /// Event type → the version this endpoint receives it at; types not
    /// named arrive as the producer sent them.
    pub schema_versions: BTreeMap<String, u32>,
    pub concurrency: u32,
    /// Requests per second at most; null for no limit.
    pub rate_limit: Option<u32>,
    pub failing_since: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// `endpoint` (yours, managed here) or `notification` (your notification
    /// URL: it receives your `endpoint.*` and `hookd.*` notices, is never disabled by
    /// failures, and is changed or removed with `PATCH /v1/partner`).
    pub kind: String,
    /// `none`, or `subject`: one delivery at a time per subject, in the
    /// order the events were committed.
    pub ordering: String,
    /// `skip` or `hold`: what an ordered subject does when its head dies.
    pub ordering_on_dead: String,
    /// Only events that pass it get a delivery; null for every event of
    /// the endpoint's types (see `docs/filters.md`).
    #[schema(value_type = Option<Object>)]
    pub filter: Option<serde_json::Value>,
}

impl From<Endpoint> for EndpointOut {
    fn from(e: Endpoint) -> Self {
        EndpointOut {
            id: e.id,
            url: e.url,
            description: e.description,
            status: e.status.as_str().into(),
            disabled_reason: e.disabled_reason,
            event_types: e.event_types,
            schema_version: e.schema_version,
            schema_versions: e.schema_versions,
            concurrency: e.concurrency,
            rate_limit: e.rate_limit,
            failing_since: e.failing_since.map(time),
            created_at: time(e.created_at),
            updated_at: time(e.updated_at),
            kind: e.kind.as_str().into(),
            ordering: e.ordering.as_str().into(),
            ordering_on_dead: e.on_dead.as_str().into(),
            filter: e.filter.map(|f| f.to_json()),
        }
    }
}

/// A new endpoint and its signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointCreated {
    #[serde(flatten)]
    pub endpoint: EndpointOut,
    #[serde(flatten)]
    pub key: KeyShown,
}

/// A new signing key as its owner sees it: a `v1` key's secret (shown this
/// once), or a `v1a` key's public key (published on the endpoint too).
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyShown {
    /// `whsec_…` (`v1`): store it now; it is never shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// `whpk_…` (`v1a`): the Ed25519 public key receivers verify with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
}

impl KeyShown {
    pub fn of(key: &SigningKey) -> KeyShown {
        match key {
            SigningKey::Hmac(secret) => KeyShown {
                secret: Some(secret.expose()),
                public_key: None,
            },
            SigningKey::Ed25519(_) => KeyShown {
                secret: None,
                public_key: key.public_key(),
            },
        }
    }
}

/// How deliveries are signed: `v1` (HMAC-SHA256 with a shared `whsec_`
/// secret, the default) or `v1a` (Ed25519: the receiver verifies with the
/// endpoint's public key and holds no secret).
#[derive(Debug, Clone, Copy, Default, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SchemeIn {
    #[default]
    V1,
    V1a,
}

impl From<SchemeIn> for Scheme {
    fn from(s: SchemeIn) -> Scheme {
        match s {
            SchemeIn::V1 => Scheme::V1,
            SchemeIn::V1a => Scheme::V1a,
        }
    }
}

/// `none` (the default): deliveries go as they come, up to the
/// endpoint's concurrency. `subject`: for each subject (the envelope's
/// `subject.type` and `subject.id`), one delivery at a time, in the order
/// the events were committed; events without a subject are not ordered.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OrderingIn {
    None,
    Subject,
}

impl From<OrderingIn> for Ordering {
    fn from(o: OrderingIn) -> Ordering {
        match o {
            OrderingIn::None => Ordering::None,
            OrderingIn::Subject => Ordering::Subject,
        }
    }
}

/// What an ordered subject does when its head dies: `skip` (the default:
/// the next one goes; the dead one stays recoverable, and its replay
/// arrives out of order, marked `hookd-replay: out-of-band`) or `hold`
/// (the subject waits until its head is replayed successfully or skipped).
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnDeadIn {
    Skip,
    Hold,
}

impl From<OnDeadIn> for OnDead {
    fn from(o: OnDeadIn) -> OnDead {
        match o {
            OnDeadIn::Skip => OnDead::Skip,
            OnDeadIn::Hold => OnDead::Hold,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum InitialStatus {
    Active,
    Paused,
}

/// An event type (`usage.finalized`) or a prefix of one (`usage.*`).
#[derive(ToSchema)]
#[schema(
    max_length = 128,
    pattern = r"^[a-z0-9_]+(\.[a-z0-9_]+)*\.([a-z0-9_]+|\*)$"
)]
#[allow(dead_code, reason = "documents the strings of `event_types`")]
pub struct EventTypeFilter(String);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateEndpoint {
    /// `https` (plain `http` only where the operator allows it), a port the
    /// operator allows, and a host that resolves only to public addresses.
    #[schema(
        format = "uri",
        max_length = 2048,
        example = "https://hooks.example.com/hookd"
    )]
    pub url: String,
    /// Free text; newlines allowed, other control characters not.
    #[schema(max_length = 1000, pattern = r"^[^\x00-\x09\x0B-\x1F\x7F-\x9F]*$")]
    pub description: Option<String>,
    /// Event types (`usage.finalized`) or prefixes (`usage.*`); none or empty means all.
    #[schema(max_items = 100, value_type = Option<Vec<EventTypeFilter>>)]
    pub event_types: Option<Vec<String>>,
    #[schema(max_length = 32, pattern = r"^[^\x00-\x09\x0B-\x1F\x7F-\x9F]*$")]
    pub schema_version: Option<String>,
    /// Event type → the version to receive it at (an integer), or
    /// `"latest"` (as the producer sent it, the default). An older version
    /// gets the event projected onto it when compatible, or the producer's
    /// rendition; otherwise the delivery is `skipped`.
    #[schema(value_type = Option<Object>)]
    pub schema_versions: Option<BTreeMap<String, serde_json::Value>>,
    /// 1 to 256; default from configuration (8).
    #[schema(minimum = 1, maximum = 256)]
    pub concurrency: Option<u32>,
    /// 1 to 10000 requests per second.
    #[schema(minimum = 1, maximum = 10000)]
    pub rate_limit: Option<u32>,
    pub status: Option<InitialStatus>,
    /// The signing key's scheme; default `v1`.
    pub signature_scheme: Option<SchemeIn>,
    /// Default `none`.
    pub ordering: Option<OrderingIn>,
    /// Default `skip`.
    pub ordering_on_dead: Option<OnDeadIn>,
    /// Only events that pass it get a delivery (a JSON condition over
    /// `type`, `subject` and `data`; see `docs/filters.md`). Default none.
    #[schema(value_type = Option<Object>)]
    pub filter: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateEndpoint {
    #[schema(format = "uri", max_length = 2048)]
    pub url: Option<String>,
    #[schema(max_length = 1000, pattern = r"^[^\x00-\x09\x0B-\x1F\x7F-\x9F]*$")]
    pub description: Option<String>,
    #[schema(max_items = 100, value_type = Option<Vec<EventTypeFilter>>)]
    pub event_types: Option<Vec<String>>,
    #[schema(max_length = 32, pattern = r"^[^\x00-\x09\x0B-\x1F\x7F-\x9F]*$")]
    pub schema_version: Option<String>,
    /// Event type → the version to receive it at (an integer), or
    /// `"latest"` (as the producer sent it, the default). An older version
    /// gets the event projected onto it when compatible, or the producer's
    /// rendition; otherwise the delivery is `skipped`.
    #[schema(value_type = Option<Object>)]
    pub schema_versions: Option<BTreeMap<String, serde_json::Value>>,
    #[schema(minimum = 1, maximum = 256)]
    pub concurrency: Option<u32>,
    #[schema(minimum = 1, maximum = 10000)]
    pub rate_limit: Option<u32>,
    /// Turning ordering on orders the deliveries created from then on;
    /// turning it off lets every waiting delivery go.
    pub ordering: Option<OrderingIn>,
    /// From `hold` to `skip`: subjects held by a dead head move on.
    pub ordering_on_dead: Option<OnDeadIn>,
    /// A new filter; `null` removes it.
    #[serde(default, deserialize_with = "super::filters::present")]
    #[schema(value_type = Option<Object>, nullable)]
    pub filter: Option<Option<serde_json::Value>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateSecret {
    /// How long the previous secret keeps signing: 0 to 604800 s, default 86400.
    #[schema(maximum = 604800)]
    pub overlap_seconds: Option<u64>,
    /// The new key's scheme; default `v1`. Rotating from `v1` to `v1a`
    /// signs with both during the overlap.
    pub scheme: Option<SchemeIn>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SecretRotated {
    /// The new key: a `whsec_…` secret shown this once, or a `whpk_…` public key.
    #[serde(flatten)]
    pub key: KeyShown,
    /// Until when the previous secret also signs.
    pub previous_expires_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PreviousExpired {
    pub expired: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestSent {
    pub event_id: String,
    pub delivery_id: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Recover {
    /// RFC 3339, within the replay window; deliveries created at or after it.
    #[schema(format = DateTime)]
    pub since: String,
    /// RFC 3339; deliveries created before it (default now).
    #[schema(format = DateTime)]
    pub until: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Recovered {
    /// Failed or dead deliveries queued for a manual attempt.
    pub replayed: u64,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// The `next_cursor` of the previous page.
    pub after: Option<String>,
    pub limit: Option<i64>,
}

impl ListQuery {
    /// The page size (within the API's bounds) and the position the page
    /// continues from.
    pub fn page(
        &self,
        api: &crate::config::ApiConfig,
    ) -> Result<(u32, Option<crate::store::scoped::Position>), crate::http::problem::Problem> {
        use crate::http::page;
        let limit = page::limit(self.limit, api.page_size_default, api.page_size_max)?;
        let from = self
            .after
            .as_deref()
            .map(page::decode_position)
            .transpose()?;
        Ok((limit, from))
    }
}
