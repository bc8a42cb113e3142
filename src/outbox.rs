//! The transactional outbox for Rust producers: write an event in the same
//! sea-orm transaction as the state change it describes. If the transaction
//! commits, hookd delivers the event; if it rolls back, no one hears of it.
//!
//! ```no_run
//! # async fn example(db: &sea_orm::DatabaseConnection) -> anyhow::Result<()> {
//! use sea_orm::TransactionTrait;
//! let txn = db.begin().await?;
//! // … update the balance in `txn` …
//! let event = hookd::outbox::Event::new("balance.updated", "partner_42", serde_json::json!({"customer_id": "cus_204", "balance": "10.00", "currency": "USD"}))
//!     .subject("balance", "bal_1", Some(7));
//! let id = hookd::outbox::enqueue(&txn, event).await?;
//! txn.commit().await?;
//! # let _ = id; Ok(()) }
//! ```
//!
//! Other languages write the same row with SQL; see docs/producing.md.

use sea_orm::ConnectionTrait;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::domain::{
    event::{EventInput, FieldError, SubjectInput},
    ids::EventId,
};

/// The largest `data` the outbox accepts from Rust producers (the same as
/// the ingest default).
pub const MAX_PAYLOAD_BYTES: usize = 256 * 1024;

/// An event to publish.
#[derive(Debug)]
pub struct Event(EventInput);

impl Event {
    pub fn new(event_type: &str, partner_id: &str, data: Value) -> Event {
        Event(EventInput {
            event_id: None,
            event_type: Some(event_type.into()),
            partner_id: Some(partner_id.into()),
            // A Value always serialises to JSON text.
            data: serde_json::value::RawValue::from_string(data.to_string()).ok(),
            subject: None,
            occurred_at: None,
            correlation_id: None,
            schema_version: None,
            renditions: None,
            traceparent: None,
            tracestate: None,
        })
    }
    /// Your own id (`evt_` + ULID or UUID), for idempotent producers.
    pub fn id(mut self, event_id: &str) -> Event {
        self.0.event_id = Some(event_id.into());
        self
    }
    pub fn subject(mut self, subject_type: &str, id: &str, version: Option<i64>) -> Event {
        self.0.subject = Some(SubjectInput {
            subject_type: subject_type.into(),
            id: id.into(),
            version,
        });
        self
    }
    pub fn occurred_at(mut self, t: chrono::DateTime<chrono::Utc>) -> Event {
        self.0.occurred_at = Some(t.to_rfc3339());
        self
    }
    /// The catalog version `data` is written for (the type's latest when
    /// not given).
    pub fn schema_version(mut self, version: u32) -> Event {
        self.0.schema_version = serde_json::value::RawValue::from_string(version.to_string()).ok();
        self
    }
    pub fn correlation_id(mut self, id: &str) -> Event {
        self.0.correlation_id = Some(id.into());
        self
    }
    /// The W3C trace context of the work that produced the event (the
    /// `traceparent` of your current span, and its `tracestate` if any): with
    /// telemetry on, hookd's publication and attempts join that trace. One
    /// that does not parse is dropped, and the event is published all the same.
    pub fn trace_context(mut self, traceparent: &str, tracestate: Option<&str>) -> Event {
        self.0.traceparent = Some(traceparent.into());
        self.0.tracestate = tracestate.map(Into::into);
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("invalid event: {0}")]
    Invalid(#[from] FieldError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// Writes the event into the outbox through `conn`, normally the caller's
/// open transaction, and returns its id.
pub async fn enqueue(conn: &impl ConnectionTrait, event: Event) -> Result<EventId, OutboxError> {
    enqueue_checked(conn, &Catalog::bundled(), event).await
}

/// As [`enqueue`], with `data` checked against `catalog` (a host that runs
/// hookd with its own `catalog.path` loads it with
/// [`crate::catalog::load_dir`]).
#[allow(
    clippy::disallowed_methods,
    reason = "runs in the host's process, which has no hookd clock to inject"
)]
pub async fn enqueue_checked(
    conn: &impl ConnectionTrait,
    catalog: &Catalog,
    event: Event,
) -> Result<EventId, OutboxError> {
    let now = chrono::Utc::now().timestamp_millis();
    let event = event.0.validate(now, MAX_PAYLOAD_BYTES, catalog)?;
    crate::store::outbox::insert(conn, std::slice::from_ref(&event), now).await?;
    Ok(event.id)
}
