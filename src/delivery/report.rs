//! What the engine's actors say about themselves, for operators: each
//! endpoint actor's circuit, requests in flight, queue and next wake. The
//! fanout asks every actor it supervises and answers with all the reports.
//! The messages and their answer only; the actors handle them.

use actix::prelude::*;
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::circuit::CircuitState;

/// Report your state.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "ActorReport")]
pub struct Report;

/// Every running endpoint actor's report.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "Vec<ActorReport>")]
pub struct ReportAll;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Circuit {
    /// Requests go.
    Closed,
    /// Nothing is sent until `open_until`.
    Open,
    /// One probe request decides whether the circuit closes.
    HalfOpen,
}

/// One endpoint actor, as it sees itself.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ActorReport {
    pub endpoint_id: String,
    pub circuit: Circuit,
    /// Unix ms until which an open circuit sends nothing.
    #[serde(skip)]
    pub open_until_ms: Option<i64>,
    pub consecutive_failures: u32,
    /// Requests on the wire.
    pub in_flight: usize,
    /// Attempts answered whose records are not yet committed.
    pub recording: usize,
    /// Places held in the outbound connection budget.
    pub places: usize,
    /// The endpoint's cap on requests in flight (null before its settings load).
    pub concurrency: Option<u32>,
    /// Claimed deliveries waiting in the actor for a free slot.
    pub queued: usize,
    /// Unix ms of the actor's next claim when it sleeps.
    #[serde(skip)]
    pub next_due_ms: Option<i64>,
    /// Requests per second, when the endpoint is rate limited.
    pub rate_limit: Option<u32>,
    /// Moving average of an attempt's duration, in milliseconds, from the
    /// first measured attempt on; `null` before one.
    pub attempt_ms: Option<f64>,
}

impl ActorReport {
    pub fn circuit_from(state: CircuitState) -> (Circuit, Option<i64>) {
        match state {
            CircuitState::Closed => (Circuit::Closed, None),
            CircuitState::Open { until_ms } => (Circuit::Open, Some(until_ms)),
            CircuitState::HalfOpen { .. } => (Circuit::HalfOpen, None),
        }
    }
}
