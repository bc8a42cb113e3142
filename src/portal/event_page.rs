//! The partner's events: the feed, in the order it is read (each event's
//! id, type, subject, when it occurred and the start of its data), and one
//! event's page: the envelope as its deliveries carry it (indented, every
//! key and number as written), and its deliveries. Read from the typed event, never from a JSON shape by name.

use actix_web::{HttpResponse, http::StatusCode};
use maud::{Markup, html};

use super::{
    Signed,
    delivery_page::deliveries_table,
    pages::{Nav, page},
};
use crate::{
    dashboard::pages::json::indented,
    domain::event::{NewEvent, Subject},
    http::partner::{deliveries::DeliveryOut, events::EventOut},
    web::when::when,
};

/// How much of an event's data the list shows.
const DATA_SHOWN: usize = 160;

/// `text` cut to at most `max` characters, with `…` when cut.
fn clipped(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

fn subject(s: Option<&Subject>) -> Markup {
    html! {
        @match s {
            Some(s) => { code { (s.subject_type) "/" (s.id) } @if let Some(v) = s.version { " v" (v) } }
            None => { span.note { "none" } }
        }
    }
}

/// The feed from the position it was asked at; `newer` continues it.
pub fn events(list: &[NewEvent], newer: &str, s: &Signed) -> HttpResponse {
    let body = html! {
        @if list.is_empty() {
            p.note #no-events { "No event yet since this point of the feed." }
        } @else {
            div.scroll {
                table #events {
                    tr { th { "Event" } th { "Type" } th { "Subject" } th { "Occurred" } th { "Data" } }
                    @for e in list {
                        tr data-event=(e.id.as_str()) {
                            td { a href={ "/portal/events/" (e.id.as_str()) } { code { (e.id.as_str()) } } }
                            td { (e.event_type) }
                            td { (subject(e.subject.as_ref())) }
                            td { (when(s.now_ms, e.occurred_at_ms)) }
                            td { pre { (clipped(&e.payload, DATA_SHOWN)) } }
                        }
                    }
                }
            }
        }
        p.pager { a #newer href={ "/portal/events?after=" (newer) } { "Newer events" } }
    };
    page(StatusCode::OK, "Events", Nav::Events, s, body)
}

/// One event, as sent, and its deliveries.
pub fn event(e: &NewEvent, deliveries: &[DeliveryOut], s: &Signed) -> HttpResponse {
    let envelope = EventOut::from(e);
    let sent = indented(&serde_json::to_string(&envelope).unwrap_or_default());
    let body = html! {
        div.scroll {
            table.facts #event {
                tr { th { "Type" } td { (e.event_type) } }
                tr { th { "Subject" } td { (subject(e.subject.as_ref())) } }
                tr { th { "Occurred" } td { (when(s.now_ms, e.occurred_at_ms)) } }
                tr { th { "Schema version" } td { (e.schema_version) } }
                @if let Some(c) = &e.correlation_id { tr { th { "Correlation id" } td { code { (c) } } } }
            }
        }
        section #envelope {
            h3 { "As delivered" }
            pre.json { (sent) }
        }
        h3 { "Deliveries" }
        (deliveries_table(deliveries, s.now_ms))
    };
    page(
        StatusCode::OK,
        &format!("Event {}", e.id.as_str()),
        Nav::Events,
        s,
        body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_data_is_clipped_at_a_character() {
        assert_eq!(clipped("abc", 3), "abc");
        assert_eq!(clipped("abcd", 3), "abc…");
        assert_eq!(clipped("ééé", 2), "éé…");
    }
}
