//! One event: its fields, its `data` as stored, the envelope as sent at
//! each schema version its endpoints receive it at (an endpoint pinned to
//! another version gets the event's rendition at that version), and its
//! deliveries, each linking to its page and its endpoint's.

use std::collections::{BTreeMap, HashMap};

use maud::{Markup, html};

use super::{Nav, href, json::indented, page, search_href, when::when, when::when_or_dash};
use crate::{
    dashboard::reads::events::Record,
    domain::event::{NewEvent, envelope_for},
    store::scoped::DeliveryRow,
};

/// The envelope one group of deliveries carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The schema version it is sent at.
    pub version: u32,
    /// Whether that is the version the producer sent.
    pub own: bool,
    /// The endpoints that receive it, in the deliveries' order.
    pub endpoints: Vec<String>,
    /// The envelope, indented; `None` when the event holds no rendition at
    /// that version.
    pub body: Option<String>,
}

/// The envelopes `deliveries` carry, one per version, lowest first, from
/// the version each is sent at (`versions`, by delivery id: `None` is the
/// event's own). Skipped deliveries (no rendition at their endpoint's
/// pinned version) send nothing and are left out.
pub fn sent_as(
    event: &NewEvent,
    deliveries: &[DeliveryRow],
    versions: &HashMap<String, Option<u32>>,
) -> Vec<Sent> {
    let own = event.schema_version;
    let mut by_version: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for d in deliveries.iter().filter(|d| d.state != "skipped") {
        let v = versions.get(&d.id).copied().flatten().unwrap_or(own);
        by_version.entry(v).or_default().push(d.endpoint_id.clone());
    }
    by_version
        .into_iter()
        .map(|(version, endpoints)| Sent {
            version,
            own: version == own,
            endpoints,
            body: envelope_for(event, (version != own).then_some(version))
                .and_then(|b| String::from_utf8(b).ok())
                .map(|t| indented(&t)),
        })
        .collect()
}

/// Everything the event page shows.
pub struct EventView<'a> {
    pub partner_id: &'a str,
    pub event: &'a NewEvent,
    pub record: &'a Record,
    /// Its deliveries, as the Partner API lists them.
    pub deliveries: &'a [DeliveryRow],
    /// The version each delivery is sent at, by delivery id.
    pub versions: &'a HashMap<String, Option<u32>>,
    pub now_ms: i64,
}

fn facts(v: &EventView) -> Markup {
    let (e, r, now) = (v.event, v.record, v.now_ms);
    html! {
        dl.facts #facts {
            dt { "Event" } dd { code { (e.id.as_str()) } }
            dt { "Type" } dd #event-type { (e.event_type) }
            dt { "Partner" } dd { code { (v.partner_id) } " · "
                a href=(super::with_query("/dashboard/endpoints", &[("partner_id", v.partner_id)])) { "its endpoints" } }
            @if let Some(s) = &e.subject {
                dt { "Subject" } dd #subject { (s.subject_type) " " code { (s.id) }
                    @if let Some(n) = s.version { " · version " (n) } }
            }
            dt { "Occurred" } dd { (when(now, e.occurred_at_ms)) }
            dt { "Received" } dd { (when(now, r.received_at)) }
            @match &r.rejected_reason {
                Some(why) => { dt { "Rejected" } dd.error #rejected { (why) } }
                None => { dt { "Published" } dd #published { (when_or_dash(now, r.published_at)) } }
            }
            dt { "Schema version" } dd #schema-version { (e.schema_version)
                @if !e.renditions.is_empty() {
                    " · renditions at " @for (i, n) in e.renditions.keys().enumerate() { @if i > 0 { ", " } (n) } }
            }
            @if let Some(c) = &e.correlation_id { dt { "Correlation id" } dd { code { (c) } } }
        }
    }
}

fn deliveries(v: &EventView) -> Markup {
    html! {
        table #deliveries {
            thead { tr {
                th { "Delivery" } th { "Endpoint" } th { "Sent at version" } th { "State" }
                th { "Attempts" } th { "Last status" } th { "Category" } th { "Updated" }
            } }
            tbody {
                @for d in v.deliveries {
                    tr data-delivery=(d.id) {
                        td { a href=(href("/dashboard/deliveries", &d.id)) { code { (d.id) } } }
                        td { a href=(href("/dashboard/endpoints", &d.endpoint_id)) { code { (d.endpoint_id) } } }
                        td.num.version { (v.versions.get(&d.id).copied().flatten().unwrap_or(v.event.schema_version)) }
                        td.state { (d.state) @if let Some(r) = &d.reason { " (" (r) ")" } }
                        td.num.attempts { (d.attempt_count) }
                        td.num { (d.last_status.map_or_else(|| "–".to_string(), |s| s.to_string())) }
                        td { (d.last_error_category.as_deref().unwrap_or("–")) }
                        td { (when(v.now_ms, d.updated_at)) }
                    }
                }
                @if v.deliveries.is_empty() { tr { td colspan="8" { "No deliveries: no endpoint received it." } } }
            }
        }
    }
}

pub fn event(v: &EventView) -> Markup {
    let e = v.event;
    let data = indented(&e.payload);
    let sent = sent_as(e, v.deliveries, v.versions);
    page(
        &format!("Event {}", e.id.as_str()),
        Nav::Search,
        None,
        html! {
            h2 { "Event " code { (e.id.as_str()) } }
            (facts(v))
            h2 { "Payload as stored" }
            p.note { "The event's data as the producer sent it, at version " (e.schema_version) "." }
            pre.json #payload { (data) }
            h2 { "As sent" }
            @for s in &sent {
                section.sent data-version=(s.version) {
                    p.note { "Version " (s.version) @if s.own { " (the producer's)" } " to "
                        @for (i, ep) in s.endpoints.iter().enumerate() {
                            @if i > 0 { ", " }
                            a href=(href("/dashboard/endpoints", ep)) { code { (ep) } }
                        }
                        ":" }
                    @match &s.body {
                        Some(b) => { pre.json { (b) } }
                        None => { p.error { "The event holds no rendition at this version." } }
                    }
                }
            }
            @if sent.is_empty() { p.note { "Sent to no endpoint." } }
            h2 { "Deliveries" }
            (deliveries(v))
            p.note { a href=(search_href(&[("event_id", e.id.as_str())])) { "Its deliveries in search →" } }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::EventId;

    fn event() -> NewEvent {
        NewEvent {
            id: EventId::generate(),
            event_type: "usage.finalized".into(),
            partner_id: "ptn_1".into(),
            subject: None,
            occurred_at_ms: 0,
            occurred_at_given: true,
            schema_version: 2,
            payload: r#"{"b":1,"a":"<script>"}"#.into(),
            correlation_id: None,
            renditions: [(1, r#"{"b":1}"#.to_string())].into(),
            trace: None,
        }
    }

    fn delivery(id: &str, endpoint: &str, state: &str) -> DeliveryRow {
        DeliveryRow {
            id: id.into(),
            event_id: "evt".into(),
            event_type: "usage.finalized".into(),
            endpoint_id: endpoint.into(),
            state: state.into(),
            attempt_count: 0,
            next_attempt_at: 0,
            last_status: None,
            last_latency_ms: None,
            last_error_category: None,
            reason: None,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn each_version_sent_is_shown_once_with_its_endpoints_and_skipped_ones_are_not() {
        let e = event();
        let deliveries = [
            delivery("d1", "ep_own", "delivered"),
            delivery("d2", "ep_v1", "pending"),
            delivery("d3", "ep_v3", "skipped"),
            delivery("d4", "ep_pinned_to_own", "failed"),
        ];
        let versions = HashMap::from([
            ("d1".to_string(), None),
            ("d2".to_string(), Some(1)),
            ("d3".to_string(), None),
            ("d4".to_string(), Some(2)),
        ]);
        let sent = sent_as(&e, &deliveries, &versions);
        let summary: Vec<(u32, bool, Vec<&str>)> = sent
            .iter()
            .map(|s| {
                (
                    s.version,
                    s.own,
                    s.endpoints.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (1, false, vec!["ep_v1"]),
                (2, true, vec!["ep_own", "ep_pinned_to_own"]),
            ]
        );
        let v1 = sent[0].body.as_deref().expect("a rendition at 1");
        assert!(
            v1.contains("\"schema_version\": 1") && v1.contains("\"data\": {\n    \"b\": 1\n  }"),
            "{v1}"
        );
    }

    #[test]
    fn the_payload_is_shown_escaped() {
        let e = event();
        let record = Record {
            received_at: 0,
            published_at: Some(0),
            rejected_reason: None,
        };
        let view = EventView {
            partner_id: "ptn_\"><b>",
            event: &e,
            record: &record,
            deliveries: &[],
            versions: &HashMap::new(),
            now_ms: 0,
        };
        let html = event_page_html(&view);
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("ptn_\"><b>"), "{html}");
    }

    fn event_page_html(v: &EventView) -> String {
        super::event(v).into_string()
    }
}
