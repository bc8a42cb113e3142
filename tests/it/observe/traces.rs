//! Traces end to end: a producer's `traceparent` carries through ingest,
//! publication and every attempt (retries days later included) into one
//! trace, exported over OTLP/HTTP to a real collector (`harness::otlp`), and
//! each attempt hands its own span to the receiver as `traceparent`. With
//! telemetry off nothing is exported and no `traceparent` is sent.

use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use sea_orm::EntityTrait as _;
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp, WAIT,
    otlp::{Collected, Collector},
    receiver::{Receiver, Reply},
    spawn_app_with,
};
use hookd_test_macros::both_backends;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PRODUCER_SPAN: &str = "00f067aa0ba902b7";
const PRODUCER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// hookd with telemetry exporting to `collector` (`on`), or configured for
/// it but off; the retry schedule without jitter; and one endpoint.
async fn traced_app(
    backend: Backend,
    collector: &Collector,
    on: bool,
) -> (TestApp, Receiver, String) {
    let url = collector.url();
    let enabled = if on { "true" } else { "false" };
    let app = spawn_app_with(
        backend,
        &[
            ("HOOKD_DELIVERY__JITTER", "0"),
            ("HOOKD_TELEMETRY__ENABLED", enabled),
            ("HOOKD_TELEMETRY__ENDPOINT", &url),
        ],
    )
    .await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app
        .endpoint(&format!("{}/hooks?token=s3cret", receiver.url()))
        .await;
    (app, receiver, endpoint)
}

/// `POST /v1/events` with `body` and, if given, a `traceparent` header.
async fn post_traced(app: &TestApp, traceparent: Option<&str>, body: &Value) -> Value {
    let mut req = app
        .http
        .post(format!("{}/v1/events", app.base_url))
        .insert_header(("content-type", "application/json"))
        .insert_header(("authorization", format!("Bearer {}", app.service_key)));
    if let Some(t) = traceparent {
        req = req.insert_header(("traceparent", t));
    }
    let mut res = req
        .send_body(body.to_string())
        .await
        .expect("the ingest request completes");
    let answer: Value = res.json().await.expect("a JSON answer");
    assert_eq!(
        res.status().as_u16(),
        201,
        "the events are accepted: {answer}"
    );
    answer
}

/// One event of type `a.b` for the test partner, published with `traceparent`.
async fn publish_traced(app: &TestApp, traceparent: Option<&str>) -> String {
    let body = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
    let answer = post_traced(app, traceparent, &body).await;
    answer["event_id"]
        .as_str()
        .expect("an event id")
        .to_string()
}

/// The stored `traceparent` of an event's outbox row.
async fn stored_traceparent(app: &TestApp, event: &str) -> Option<String> {
    hookd::store::entity::outbox_event::Entity::find_by_id(event.to_string())
        .one(app.db())
        .await
        .expect("the outbox is readable")
        .expect("the event is stored")
        .traceparent
}

/// Every span exported so far about `event`, or in the ingest of it.
fn spans_in(collector: &Collector, trace_id: &str) -> Vec<Collected> {
    let mut spans: Vec<Collected> = collector
        .spans()
        .into_iter()
        .filter(|s| s.trace_id == trace_id)
        .collect();
    spans.sort_by_key(|s| (s.span.start_time_unix_nano, s.attr("hookd.attempt.number")));
    spans
}

#[both_backends]
async fn an_event_s_ingest_publication_and_attempts_are_one_trace_that_the_receiver_joins(
    backend: Backend,
) {
    let collector = Collector::start();
    let (app, receiver, endpoint) = traced_app(backend, &collector, true).await;
    receiver.script([Reply::status(500)]);

    let event = publish_traced(&app, Some(PRODUCER)).await;
    app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
    app.advance(Duration::from_secs(10));
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    app.running.shared.telemetry.flush();

    let spans = spans_in(&collector, TRACE);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["POST /v1/events", "publish a.b", "POST", "POST"],
        "ingest, publication and two attempts, in the producer's trace: {spans:#?}"
    );
    let (ingest, publication) = (&spans[0], &spans[1]);
    assert_eq!(ingest.kind, SpanKind::Server);
    assert_eq!(
        ingest.parent_span_id, PRODUCER_SPAN,
        "a child of the producer's span"
    );
    assert_eq!(
        ingest.attr("http.response.status_code").as_deref(),
        Some("201")
    );
    assert_eq!(ingest.service, "hookd");
    assert_eq!(publication.attr("hookd.event.id"), Some(event.clone()));
    assert_eq!(publication.parent_span_id, ingest.span_id);

    let attempts = &spans[2..];
    for (a, (number, status)) in attempts.iter().zip([("1", "500"), ("2", "200")]) {
        assert_eq!(a.kind, SpanKind::Client, "{a:#?}");
        assert_eq!(
            a.parent_span_id, ingest.span_id,
            "every attempt joins the event's context"
        );
        assert_eq!(a.attr("hookd.attempt.number").as_deref(), Some(number));
        assert_eq!(a.attr("http.response.status_code").as_deref(), Some(status));
        assert_eq!(a.attr("http.request.method").as_deref(), Some("POST"));
        let full = format!("{}/hooks?token=REDACTED", receiver.url());
        assert_eq!(a.attr("url.full"), Some(full), "query values are redacted");
        assert_eq!(a.attr("server.address").as_deref(), Some("127.0.0.1"));
        let port = receiver.addr().port().to_string();
        assert_eq!(a.attr("server.port"), Some(port));
        assert_eq!(a.attr("hookd.endpoint.id"), Some(endpoint.clone()));
        assert_eq!(a.attr("hookd.partner.id"), Some(app.partner_id.clone()));
        assert_eq!(a.attr("hookd.event.id"), Some(event.clone()));
        assert!(
            a.attr("hookd.delivery.id")
                .is_some_and(|d| d.starts_with("dlv")),
            "{a:#?}"
        );
    }
    let (first, second) = (&attempts[0], &attempts[1]);
    assert_eq!(first.attr("error.type").as_deref(), Some("http_status"));
    assert!(first.is_error(), "a 500 fails the attempt span");
    assert_eq!(second.attr("error.type"), None);
    assert_eq!(
        first.attr("hookd.delivery.id"),
        second.attr("hookd.delivery.id")
    );

    let requests = receiver.received();
    assert_eq!(requests.len(), 2);
    for (request, attempt) in requests.iter().zip(attempts) {
        let expected = format!("00-{TRACE}-{}-01", attempt.span_id);
        assert_eq!(
            request.header("traceparent"),
            Some(expected.as_str()),
            "the receiver joins the trace under that attempt's span"
        );
    }
    assert!(
        collector
            .requests()
            .iter()
            .all(|r| r == "POST /v1/traces application/x-protobuf"),
        "{:?}",
        collector.requests()
    );
}

#[both_backends]
async fn with_telemetry_off_nothing_is_exported_and_no_traceparent_is_sent(backend: Backend) {
    let collector = Collector::start();
    let (app, receiver, endpoint) = traced_app(backend, &collector, false).await;

    let event = publish_traced(&app, Some(PRODUCER)).await;
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    app.running.shared.telemetry.flush();

    assert!(app.running.shared.telemetry.tracer().is_none());
    let request = &receiver.received()[0];
    assert_eq!(request.header("traceparent"), None, "{:?}", request.headers);
    assert_eq!(request.header("tracestate"), None);
    assert!(
        collector.requests().is_empty(),
        "{:?}",
        collector.requests()
    );
    assert_eq!(
        stored_traceparent(&app, &event).await.as_deref(),
        Some(PRODUCER),
        "the producer's context is kept for the event all the same"
    );
}

#[both_backends]
async fn a_malformed_traceparent_is_ignored_and_never_stored(backend: Backend) {
    let collector = Collector::start();
    let (app, _receiver, _endpoint) = traced_app(backend, &collector, true).await;
    let malformed = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01";

    let event = publish_traced(&app, Some(malformed)).await;
    app.running.shared.telemetry.flush();

    let stored = stored_traceparent(&app, &event).await.expect("a context");
    assert!(!stored.to_lowercase().contains(TRACE), "{stored}");
    let ingest = collector
        .spans()
        .into_iter()
        .find(|s| s.name == "POST /v1/events")
        .expect("the ingest span is exported");
    assert_eq!(ingest.parent_span_id, "", "a fresh trace: {ingest:#?}");
    assert_eq!(
        stored,
        format!("00-{}-{}-01", ingest.trace_id, ingest.span_id)
    );
}

#[both_backends]
async fn a_batch_item_s_own_traceparent_wins_over_the_header(backend: Backend) {
    let collector = Collector::start();
    let (app, _receiver, _endpoint) = traced_app(backend, &collector, false).await;
    let own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let body = json!([
        {"type": "a.b", "partner_id": app.partner_id, "data": {}, "traceparent": own, "tracestate": "k=v"},
        {"type": "a.b", "partner_id": app.partner_id, "data": {}},
        {"type": "a.b", "partner_id": app.partner_id, "data": {}, "traceparent": "nonsense"},
    ]);
    let answer = post_traced(&app, Some(PRODUCER), &body).await;
    let ids: Vec<&str> = answer["data"]
        .as_array()
        .expect("the batch's events")
        .iter()
        .filter_map(|e| e["event_id"].as_str())
        .collect();
    assert_eq!(stored_traceparent(&app, ids[0]).await.as_deref(), Some(own));
    assert_eq!(
        stored_traceparent(&app, ids[1]).await.as_deref(),
        Some(PRODUCER)
    );
    assert_eq!(
        stored_traceparent(&app, ids[2]).await.as_deref(),
        Some(PRODUCER),
        "a malformed field is ignored, as if the event had none"
    );
}

#[both_backends]
async fn an_event_written_with_its_context_by_a_producer_s_transaction_joins_that_trace(
    backend: Backend,
) {
    let collector = Collector::start();
    let (app, receiver, endpoint) = traced_app(backend, &collector, true).await;
    let outbox_event = hookd::outbox::Event::new("a.b", &app.partner_id, json!({}))
        .trace_context(PRODUCER, Some("vendor=1"));
    let catalog = &app.running.shared.catalog;
    let event = hookd::outbox::enqueue_checked(app.db(), catalog, outbox_event)
        .await
        .expect("the event is written")
        .as_str()
        .to_string();
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    app.running.shared.telemetry.flush();

    let spans = spans_in(&collector, TRACE);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["publish a.b", "POST"], "{spans:#?}");
    assert!(
        spans.iter().all(|s| s.parent_span_id == PRODUCER_SPAN),
        "{spans:#?}"
    );
    let request = &receiver.received()[0];
    assert_eq!(request.header("tracestate"), Some("vendor=1"));
}

#[both_backends]
async fn an_unreachable_collector_loses_spans_and_never_a_delivery(backend: Backend) {
    // A port that was free a moment ago: nothing listens there.
    let gone = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", gone.local_addr().expect("its address"));
    drop(gone);
    let app = spawn_app_with(
        backend,
        &[
            ("HOOKD_TELEMETRY__ENABLED", "true"),
            ("HOOKD_TELEMETRY__ENDPOINT", &url),
            ("HOOKD_TELEMETRY__EXPORT_TIMEOUT", "1s"),
        ],
    )
    .await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    for _ in 0..3 {
        let event = publish_traced(&app, Some(PRODUCER)).await;
        app.wait_for_state(&event, &endpoint, "delivered", WAIT)
            .await;
        // The export fails (refused) while deliveries go on.
        app.running.shared.telemetry.flush();
    }
    let traced = receiver
        .received()
        .iter()
        .filter(|r| r.header("traceparent").is_some_and(|t| t.contains(TRACE)))
        .count();
    assert_eq!(traced, 3, "every attempt still carries its traceparent");
}
