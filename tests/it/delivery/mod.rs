//! Delivery: signed requests, the response policy, the retry schedule and
//! `Retry-After` on the manual clock, the circuit breaker, the flow of
//! requests to an endpoint, deliveries held by a disabled endpoint, and
//! retention.
//!
//! - `signing`: what a delivery and its retries look like on the wire;
//! - `responses`: what the receiver's status does to a delivery;
//! - `client_errors`: a 4xx that is a persistent receiver error, through
//!   its retries;
//! - `facts`: what each attempt keeps (its URL, its next retry, a redirect);
//! - `window`: the delivery window, counted from the event;
//! - `network`: failures without an answer, and blocked destinations;
//! - `handshakes`: TCP and TLS handshakes that never complete;
//! - `bodies`: the response body's read cap and its stored excerpt;
//! - `schedule`: when retries go, and when a delivery is dead;
//! - `retry_after`: the receiver's `Retry-After`, to the second;
//! - `circuit`: the breaker's cool-down, its doubling and its reset;
//! - `flow`: concurrency, rate limits, kept-alive connections, the fanout;
//! - `held`: deliveries held by a disabled endpoint;
//! - `retention`: what the sweep deletes, and what it keeps.

use serde_json::json;

use hookd::store::entity::attempt;

use crate::harness::{
    Backend, TestApp,
    receiver::{Receiver, Reply},
    spawn_app_with,
};

mod bodies;
mod circuit;
mod client_errors;
mod facts;
mod flow;
mod handshakes;
mod held;
mod network;
mod oldest_first;
mod own_lease;
mod responses;
mod retention;
mod retry_after;
mod schedule;
mod signing;
mod window;

/// `usage.finalized` data (its latest version, 2) numbered `n`.
fn usage(n: u32) -> serde_json::Value {
    json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
        "usage_id": format!("usage_{n}"), "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013})
}

/// hookd configured with `env`, and an endpoint (all types) at a new
/// receiver: (app, receiver, endpoint).
async fn endpoint_on(backend: Backend, env: &[(&str, &str)]) -> (TestApp, Receiver, String) {
    let app = spawn_app_with(backend, env).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    (app, receiver, endpoint)
}

/// Like `endpoint_on`, with jitter off (and `extra`): retries go exactly on
/// the schedule.
async fn jitterless_endpoint(
    backend: Backend,
    extra: &[(&str, &str)],
) -> (TestApp, Receiver, String) {
    let mut env = vec![("HOOKD_DELIVERY__JITTER", "0")];
    env.extend_from_slice(extra);
    endpoint_on(backend, &env).await
}

/// One event sent to a new endpoint whose receiver always answers `reply`,
/// and the first attempt of that delivery once it is recorded: (receiver,
/// endpoint, event, attempt).
async fn first_attempt_against(
    app: &TestApp,
    reply: Reply,
) -> (Receiver, String, String, attempt::Model) {
    let receiver = Receiver::start().await;
    receiver.set_default(reply);
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({})).await;
    let mut attempts = app.attempts_when(&event, &endpoint, 1).await;
    (receiver, endpoint, event, attempts.swap_remove(0))
}

/// Asserts that the attempt ended within `ms` milliseconds; `what` says
/// what ended it then, and what would have made it last longer.
fn assert_ended_within(attempt: &attempt::Model, ms: i32, what: &str) {
    assert!(
        attempt.latency_ms.unwrap_or(i32::MAX) < ms,
        "{what}: the attempt took {:?} ms, not under {ms}",
        attempt.latency_ms
    );
}

/// The id of the delivery of `event` to `endpoint`.
async fn delivery_id(app: &TestApp, event: &str, endpoint: &str) -> String {
    app.delivery_row(event, endpoint).await.id
}

/// Sets the endpoint's status straight in the store, as another instance
/// (or an operator's SQL) would, without telling this engine.
async fn set_status(app: &TestApp, endpoint: &str, status: &str) {
    use sea_orm::ConnectionTrait;
    let sql = format!("UPDATE endpoint SET status = '{status}' WHERE id = '{endpoint}'");
    app.db()
        .execute_unprepared(&sql)
        .await
        .expect("the status changes");
}
