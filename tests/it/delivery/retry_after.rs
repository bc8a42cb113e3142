//! The receiver's `Retry-After` on 408, 425, 429 and 5xx: in seconds or as an
//! HTTP date, honoured to the second on the engine's clock, and never longer
//! than `delivery.retry_after_cap`. Jitter is off, so the times are exact.

use std::time::Duration;

use hookd::domain::clock::{Clock as _, from_ms};
use serde_json::json;

use super::jitterless_endpoint;
use crate::harness::{
    Backend, TestApp, WAIT,
    receiver::{Receiver, Reply},
    spawn_app_with,
};
use hookd_test_macros::both_backends;

/// A hookd without jitter (and `extra`), a receiver that answers `first`
/// once and 200 after, and one event sent to it: (app, receiver, endpoint,
/// event), once the first attempt has failed.
async fn refused_once(
    backend: Backend,
    extra: &[(&str, &str)],
    first: Reply,
) -> (TestApp, Receiver, String, String) {
    let (app, receiver, endpoint) = jitterless_endpoint(backend, extra).await;
    receiver.script([first]);
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    (app, receiver, endpoint, event)
}

/// The retry goes `delay` after the failed first attempt on the manual
/// clock: not a second before, and at once when it is due.
async fn retried_exactly_after(
    app: &TestApp,
    receiver: &Receiver,
    endpoint: &str,
    event: &str,
    delay: Duration,
) {
    app.advance(delay - Duration::from_secs(1));
    receiver.stays_at(1).await;
    app.advance(Duration::from_secs(1));
    receiver
        .wait_for(2, WAIT)
        .await
        .unwrap_or_else(|e| panic!("the retry is due {delay:?} after the first attempt: {e}"));
    app.wait_for_state(event, endpoint, "delivered", WAIT).await;
}

#[both_backends]
async fn retry_after_in_seconds_is_honoured_to_the_second(backend: Backend) {
    let (app, receiver, endpoint, event) =
        refused_once(backend, &[], Reply::retry_after(429, "120")).await;
    retried_exactly_after(&app, &receiver, &endpoint, &event, Duration::from_secs(120)).await;
}

#[both_backends]
async fn retry_after_as_an_http_date_is_honoured_on_the_engines_clock(backend: Backend) {
    let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__JITTER", "0")]).await;
    // A day ahead of the wall clock: a date read against the wall clock
    // instead of the engine's would ask for a day (capped to an hour).
    app.advance(Duration::from_secs(86_400));
    let now_ms = app.clock.now_ms();
    // The whole second at least two minutes ahead: the retry is due then.
    let due_ms = (now_ms / 1000 + 121) * 1000;
    let date = from_ms(due_ms)
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let receiver = Receiver::start().await;
    receiver.script([Reply::retry_after(503, &date)]);
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    let delay = Duration::from_millis((due_ms - now_ms) as u64);
    retried_exactly_after(&app, &receiver, &endpoint, &event, delay).await;
}

#[both_backends]
async fn a_retry_after_over_the_cap_is_cut_to_the_cap(backend: Backend) {
    let (app, receiver, endpoint, event) = refused_once(
        backend,
        &[("HOOKD_DELIVERY__RETRY_AFTER_CAP", "90s")],
        Reply::retry_after(503, "600"),
    )
    .await;
    retried_exactly_after(&app, &receiver, &endpoint, &event, Duration::from_secs(90)).await;
}

/// A status the delivery contract (docs/delivery.md) retries like 429: a failure of category
/// `http_status` with its status recorded, retried when its `Retry-After`
/// (60 s, well past the schedule's 5 s) says.
async fn is_retried_after_its_retry_after(backend: Backend, status: u16) {
    let (app, receiver, endpoint, event) =
        refused_once(backend, &[], Reply::retry_after(status, "60")).await;
    let attempts = app.attempts(&event, &endpoint).await;
    assert_eq!(attempts[0].status_code, Some(i32::from(status)));
    assert_eq!(
        attempts[0].error_category.as_deref(),
        Some("http_status"),
        "{status} is an http_status failure"
    );
    retried_exactly_after(&app, &receiver, &endpoint, &event, Duration::from_secs(60)).await;
}

#[both_backends]
async fn a_408_is_retried_after_its_retry_after(backend: Backend) {
    is_retried_after_its_retry_after(backend, 408).await;
}

#[both_backends]
async fn a_425_is_retried_after_its_retry_after(backend: Backend) {
    is_retried_after_its_retry_after(backend, 425).await;
}
