//! hookd's spans, by the OpenTelemetry semantic conventions where one
//! applies: the ingest request (server), an event's publication, and each
//! attempt (an HTTP client span). Callers hold a tracer only when telemetry
//! is on, so nothing here runs otherwise.

use std::time::SystemTime;

use opentelemetry::{
    Context, KeyValue,
    trace::{
        Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags,
        TraceId, TraceState, Tracer as _,
    },
};
use opentelemetry_sdk::trace::SdkTracer;

use crate::domain::trace::TraceContext;

/// A span in flight; ended by one of the `end_*` functions (or when dropped).
pub type Span = opentelemetry_sdk::trace::Span;

/// The context a stored or received [`TraceContext`] stands for.
fn parent(trace: Option<&TraceContext>) -> Context {
    let remote = trace.and_then(|t| {
        let trace_id = TraceId::from_hex(t.trace_id()).ok()?;
        let span_id = SpanId::from_hex(t.span_id()).ok()?;
        let state = t
            .tracestate()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let flags = TraceFlags::new(t.flags());
        Some(SpanContext::new(trace_id, span_id, flags, true, state))
    });
    match remote {
        Some(sc) => Context::new().with_remote_span_context(sc),
        None => Context::new(),
    }
}

/// The context a span's children (in hookd or at a receiver) join.
pub fn context_of(span: &Span) -> Option<TraceContext> {
    let sc = span.span_context();
    let state = sc.trace_state().header();
    TraceContext::of_span(
        &sc.trace_id().to_string(),
        &sc.span_id().to_string(),
        sc.trace_flags().to_u8(),
        Some(state.as_str()).filter(|s| !s.is_empty()),
    )
}

/// The ingest request's server span, a child of the producer's context.
pub fn ingest(tracer: &SdkTracer, producer: Option<&TraceContext>, route: &str) -> Span {
    tracer
        .span_builder(format!("POST {route}"))
        .with_kind(SpanKind::Server)
        .with_attributes([
            KeyValue::new("http.request.method", "POST"),
            KeyValue::new("http.route", route.to_string()),
            KeyValue::new("url.path", route.to_string()),
        ])
        .start_with_context(tracer, &parent(producer))
}

/// Ends the ingest span with its answer; a 5xx is an error, a refusal not.
pub fn end_ingest(mut span: Span, status: u16) {
    span.set_attribute(KeyValue::new(
        "http.response.status_code",
        i64::from(status),
    ));
    if status >= 500 {
        span.set_attribute(KeyValue::new("error.type", status.to_string()));
        span.set_status(Status::error(format!("answered {status}")));
    }
    span.end();
}

/// One event's publication: its deliveries created in one transaction.
pub struct Publication<'a> {
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub partner_id: &'a str,
    pub trace: Option<&'a TraceContext>,
}

/// The publication span, started at `start` (before the transaction).
pub fn publication(tracer: &SdkTracer, p: &Publication<'_>, start: SystemTime) -> Span {
    tracer
        .span_builder(format!("publish {}", p.event_type))
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes([
            KeyValue::new("hookd.event.id", p.event_id.to_string()),
            KeyValue::new("hookd.event.type", p.event_type.to_string()),
            KeyValue::new("hookd.partner.id", p.partner_id.to_string()),
        ])
        .start_with_context(tracer, &parent(p.trace))
}

/// Publication spans for events published in one transaction that began
/// at `start` and has just ended (`failure`: why it failed).
pub fn publications<'a>(
    tracer: &SdkTracer,
    events: impl IntoIterator<Item = Publication<'a>>,
    start: SystemTime,
    failure: Option<&str>,
) {
    for p in events {
        end_work(publication(tracer, &p, start), failure);
    }
}

/// Ends a span of hookd's own work, as an error if it failed.
pub fn end_work(mut span: Span, failure: Option<&str>) {
    if let Some(why) = failure {
        span.set_status(Status::error(why.to_string()));
    }
    span.end();
}

/// What an attempt span says about its delivery.
pub struct Attempt<'a> {
    pub event_id: &'a str,
    pub delivery_id: &'a str,
    pub endpoint_id: &'a str,
    pub partner_id: &'a str,
    pub attempt_no: u32,
    /// The callback URL, when it parsed (see [`super::redact::url_full`]).
    pub url: Option<(&'a url::Url, &'a str, u16)>,
    /// The event's stored context: every attempt of a delivery is a child of it.
    pub trace: Option<&'a TraceContext>,
}

/// The attempt's HTTP client span.
pub fn attempt(tracer: &SdkTracer, a: &Attempt<'_>) -> Span {
    let mut attributes = vec![
        KeyValue::new("http.request.method", "POST"),
        KeyValue::new("hookd.attempt.number", i64::from(a.attempt_no)),
        KeyValue::new("hookd.event.id", a.event_id.to_string()),
        KeyValue::new("hookd.delivery.id", a.delivery_id.to_string()),
        KeyValue::new("hookd.endpoint.id", a.endpoint_id.to_string()),
        KeyValue::new("hookd.partner.id", a.partner_id.to_string()),
    ];
    if let Some((url, host, port)) = a.url {
        attributes.push(KeyValue::new("url.full", super::redact::url_full(url)));
        attributes.push(KeyValue::new("server.address", host.to_string()));
        attributes.push(KeyValue::new("server.port", i64::from(port)));
    }
    tracer
        .span_builder("POST")
        .with_kind(SpanKind::Client)
        .with_attributes(attributes)
        .start_with_context(tracer, &parent(a.trace))
}

/// How an attempt ended, as its span records it.
pub struct Ended<'a> {
    pub status: Option<u16>,
    /// hookd's error category (`http_status`, `timeout`, …) when it failed.
    pub error: Option<&'a str>,
    pub detail: Option<&'a str>,
    pub peer: Option<std::net::SocketAddr>,
}

pub fn end_attempt(mut span: Span, ended: Option<Ended<'_>>) {
    let Some(e) = ended else {
        // Withheld before the wire (the endpoint's lease was lost).
        span.set_attribute(KeyValue::new("hookd.attempt.withheld", true));
        span.end();
        return;
    };
    if let Some(status) = e.status {
        span.set_attribute(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
    }
    if let Some(peer) = e.peer {
        span.set_attribute(KeyValue::new("network.peer.address", peer.ip().to_string()));
        span.set_attribute(KeyValue::new("network.peer.port", i64::from(peer.port())));
    }
    if let Some(category) = e.error {
        span.set_attribute(KeyValue::new("error.type", category.to_string()));
        let why = e.detail.filter(|d| !d.is_empty()).unwrap_or(category);
        span.set_status(Status::error(why.to_string()));
    }
    span.end();
}
