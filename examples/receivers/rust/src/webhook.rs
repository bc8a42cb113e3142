//! `POST /webhooks`: verify the request, commit the event to the inbox, and
//! only then answer 2xx. Nothing is applied here: the inbox's task does that
//! after the answer, so hookd never waits on your business logic.
//!
//! Before storing, `data` is validated against the published JSON Schema of
//! its type and `schema_version` (the bundled catalog, the same schemas
//! `GET /v1/event-types` publishes): an event this receiver was not built
//! for is refused with 422, so it is retried, not silently half-applied.

use std::sync::Arc;

use actix_web::{HttpRequest, HttpResponse, ResponseError, http::StatusCode, web};
use hookd::{
    catalog::{self, Catalog, Refusal},
    secret::Secret,
    signing::{self, DEFAULT_TOLERANCE_SECS, VerifyError},
};
use serde::Deserialize;
use tokio::sync::Notify;

use crate::inbox::{Inbox, Stored};

/// What the handler shares across requests.
pub struct Receiver {
    pub secrets: Vec<Secret>,
    /// The published schemas `data` is validated against.
    pub catalog: Arc<Catalog>,
    pub inbox: Inbox,
    /// Tells the inbox's task that a new event is pending.
    pub wake: Arc<Notify>,
}

/// Why a request was not acknowledged. The answer's status tells hookd what
/// to do: a 4xx is recorded with this text (the partner reads it in the
/// attempt's excerpt), a 503 is retried later.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("signature verification failed: {0}")]
    Unverified(#[from] VerifyError),
    #[error("the body is not a JSON event")]
    NotAnEvent,
    /// `data` does not match the published schema of its type and version:
    /// a producer and a receiver that disagree. Not stored; hookd retries,
    /// and the attempt's excerpt says where.
    #[error("data does not match the schema of {event_type} v{version}: {problem}")]
    InvalidData {
        event_type: String,
        version: u32,
        problem: String,
    },
    /// Not stored, so not acknowledged. The text says nothing internal; the
    /// log has the cause.
    #[error("the inbox is unavailable; retry later")]
    Unavailable(#[source] sqlx::Error),
}

impl ResponseError for Refused {
    fn status_code(&self) -> StatusCode {
        match self {
            Refused::Unverified(_) => StatusCode::UNAUTHORIZED,
            Refused::NotAnEvent => StatusCode::BAD_REQUEST,
            Refused::InvalidData { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Refused::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// The fields read before the event is stored: the rest is the handlers'.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type")]
    event_type: String,
    schema_version: u32,
    data: serde_json::Value,
}

/// `body` is the raw bytes as sent: the signature covers exactly these, so
/// never verify a re-serialised JSON value.
pub async fn receive(
    request: HttpRequest,
    body: web::Bytes,
    receiver: web::Data<Receiver>,
) -> Result<HttpResponse, Refused> {
    let header = |name| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    };
    let webhook_id = header("webhook-id");
    let (event_type, text) = verify(
        &receiver.secrets,
        webhook_id,
        header("webhook-timestamp"),
        header("webhook-signature"),
        &body,
    )
    .and_then(|(head, text)| validate(&receiver.catalog, head).map(|t| (t, text)))
    .inspect_err(|e| tracing::warn!(webhook_id, "refused: {e}"))?;

    let stored = receiver
        .inbox
        .store(webhook_id, &event_type, text)
        .await
        .map_err(|e| {
            tracing::error!(webhook_id, "could not store: {e}");
            Refused::Unavailable(e)
        })?;
    // Committed and synced: now the 2xx is true.
    Ok(match stored {
        Stored::New => {
            receiver.wake.notify_one();
            HttpResponse::Ok().body("stored")
        }
        // A retry after a lost answer, a replay: acknowledged, not applied again.
        Stored::Duplicate => HttpResponse::Ok().body("duplicate"),
    })
}

/// Checks the signature against every configured secret (each `v1,` entry,
/// compared in constant time by `hookd::signing::verify`) and the timestamp
/// (at most 5 minutes off), then reads the event's head. Returns it and the
/// body as text, to store.
fn verify<'b>(
    secrets: &[Secret],
    webhook_id: &str,
    timestamp: &str,
    signature: &str,
    body: &'b [u8],
) -> Result<(Head, &'b str), Refused> {
    let now = crate::now().timestamp();
    // The first secret that verifies wins; otherwise the last one's reason
    // (the same for all when the timestamp is off).
    secrets
        .iter()
        .map(|secret| {
            signing::verify(
                secret,
                webhook_id,
                timestamp,
                signature,
                body,
                now,
                DEFAULT_TOLERANCE_SECS,
            )
        })
        .reduce(Result::or)
        .unwrap_or(Err(VerifyError::NoMatchingSignature))?;
    let text = std::str::from_utf8(body).map_err(|_| Refused::NotAnEvent)?;
    let head: Head = serde_json::from_str(text).map_err(|_| Refused::NotAnEvent)?;
    Ok((head, text))
}

/// Checks `data` against the schema of its type at its `schema_version`;
/// returns the type. A type the catalog does not name passes (it is stored
/// and `ignored`, to apply once this code knows it); so does hookd's own
/// `webhook.check`, which has no schema.
fn validate(catalog: &Catalog, head: Head) -> Result<String, Refused> {
    let refused = |problem: String| Refused::InvalidData {
        event_type: head.event_type.clone(),
        version: head.schema_version,
        problem,
    };
    match catalog.check(&head.event_type, head.schema_version, &head.data) {
        Ok(()) | Err(Refusal::UnknownType) => Ok(head.event_type),
        Err(Refusal::UnknownVersion { latest }) => Err(refused(format!(
            "this receiver knows versions up to {latest}; pin the endpoint to one of them"
        ))),
        Err(Refusal::InvalidData(errors)) => Err(refused(catalog::describe(&errors))),
    }
}
