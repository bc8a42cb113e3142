//! The partner's deliveries: the searchable list (each with its endpoint,
//! event, state badge and last answer) and one delivery's page with every
//! attempt in full: when, what came back (status, category and detail),
//! how long it took, from which address, and the redacted answer.

use actix_web::HttpResponse;
use maud::{Markup, html};

use super::{
    Signed, badge,
    form::{Draft, token_field},
    pages::{Nav, page},
};
use crate::http::partner::deliveries::{AttemptOut, DeliveryOut, STATES};

/// The deliveries as a table, times relative to `now_ms`.
pub fn deliveries_table(list: &[DeliveryOut], now_ms: i64) -> Markup {
    html! {
        @if list.is_empty() {
            p.note #no-deliveries { "No delivery yet." }
        } @else {
            div.scroll {
                table #deliveries {
                    tr { th { "Delivery" } th { "Endpoint" } th { "Event" } th { "State" } th { "Attempts" } th { "Last answer" } th { "Created" } }
                    @for d in list {
                        tr data-delivery=(d.id) {
                            td { a href={ "/portal/deliveries/" (d.id) } { code { (d.id) } } }
                            td.endpoint { a href={ "/portal/endpoints/" (d.endpoint_id) } { code { (d.endpoint_id) } } }
                            td.event { a href={ "/portal/events/" (d.event_id) } { code { (d.event_id) } } small { (d.event_type) } }
                            td.state { (badge::state(&d.state)) }
                            td { (d.attempt_count) }
                            td.answer { (badge::answer(d.last_status, d.last_error_category.as_deref())) }
                            td { (badge::time(now_ms, Some(&d.created_at))) }
                        }
                    }
                }
            }
        }
    }
}

/// What the search form was asked (shown again in it).
#[derive(Debug, Default)]
pub struct Searched {
    pub state: String,
    pub endpoint_id: String,
}

/// The deliveries page: the search, the list, and a link to older ones.
pub fn deliveries(
    list: &[DeliveryOut],
    searched: &Searched,
    older: Option<String>,
    s: &Signed,
) -> HttpResponse {
    let body = html! {
        form.row #search method="get" action="/portal/deliveries" {
            div.field {
                label for="state" { "State" }
                select #state name="state" {
                    option value="" { "any" }
                    @for st in STATES { option value=(st) selected[searched.state == st] { (st) } }
                }
            }
            div.field {
                label for="endpoint_id" { "Endpoint" }
                input #endpoint_id name="endpoint_id" value=(searched.endpoint_id) placeholder="ep_…";
            }
            button type="submit" { "Search" }
        }
        (deliveries_table(list, s.now_ms))
        @if let Some(href) = older { p.pager { a #older href=(href) { "Older deliveries" } } }
    };
    page(
        actix_web::http::StatusCode::OK,
        "Deliveries",
        Nav::Deliveries,
        s,
        body,
    )
}

fn attempts_table(attempts: &[AttemptOut], now_ms: i64) -> Markup {
    html! {
        @if attempts.is_empty() {
            p.note #no-attempts { "No attempt yet." }
        } @else {
            div.scroll {
                table #attempts {
                    tr { th { "#" } th { "Started" } th { "Answer" } th { "Detail" } th { "Duration" } th { "Remote address" } th { "URL (redacted)" } th { "Next retry" } th { "Trigger" } th { "Response (redacted)" } }
                    @for a in attempts {
                        tr data-attempt=(a.id) {
                            td { (a.attempt_no) }
                            td { (badge::time(now_ms, Some(&a.started_at))) }
                            td.answer { (badge::answer(a.status_code, a.error_category.as_deref())) }
                            td.detail.wide { (a.error_detail.as_deref().unwrap_or("–")) }
                            td.duration { (a.latency_ms.map_or("–".to_string(), |l| format!("{l} ms"))) }
                            td.remote { code { (a.remote_addr.as_deref().unwrap_or("–")) } }
                            td.url.wide {
                                code { (a.url.as_deref().unwrap_or("–")) }
                                @if let Some(l) = &a.location { br; "Location: " code.location { (l) } }
                            }
                            td.next-retry { (badge::time(now_ms, a.next_attempt_at.as_deref())) }
                            td { (a.trigger) }
                            td.excerpt {
                                @if let Some(x) = a.response_excerpt.as_deref().filter(|x| !x.is_empty()) { pre { (x) } }
                                @else { "–" }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// One delivery and its attempts; the replay form shows why it was refused.
pub fn delivery(
    d: &DeliveryOut,
    attempts: &[AttemptOut],
    s: &Signed,
    draft: &Draft,
) -> HttpResponse {
    let now = s.now_ms;
    let body = html! {
        div.scroll {
            table.facts #delivery {
                tr { th { "State" } td.state { (badge::state(&d.state)) @if let Some(r) = &d.reason { " " span.note { (r) } } } }
                tr { th { "Event" } td { a href={ "/portal/events/" (d.event_id) } { code { (d.event_id) } } " (" (d.event_type) ")" } }
                tr { th { "Endpoint" } td { a href={ "/portal/endpoints/" (d.endpoint_id) } { code { (d.endpoint_id) } } } }
                tr { th { "Attempts" } td { (d.attempt_count) } }
                @if let Some(next) = &d.next_attempt_at { tr { th { "Next attempt" } td { (badge::time(now, Some(next))) } } }
                tr { th { "Created" } td { (badge::time(now, Some(&d.created_at))) } }
                tr { th { "Updated" } td { (badge::time(now, Some(&d.updated_at))) } }
            }
        }
        (draft.form_error("replay-form", &[]))
        div.actions {
            form #replay-form method="post" action={ "/portal/deliveries/" (d.id) "/replay" } {
                (token_field(&s.csrf)) button type="submit" { "Send again now" }
            }
        }
        h3 { "Attempts" }
        (attempts_table(attempts, now))
    };
    page(
        draft.status(),
        &format!("Delivery {}", d.id),
        Nav::Deliveries,
        s,
        body,
    )
}
