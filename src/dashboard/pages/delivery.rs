//! One delivery with all its attempts, the operator actions on it, and the
//! form to replay it.

use maud::{Markup, html};

use super::{
    Forms, Nav, csrf_field, href, object_page,
    pager::keyset_links,
    when::{when, when_or_dash},
};
use crate::{
    dashboard::paging::Keyset,
    store::{audit::Recorded, entity::attempt, scoped::DeliveryRow},
};

/// Everything the delivery page shows.
pub struct DeliveryView<'a> {
    pub partner_id: &'a str,
    pub delivery: &'a DeliveryRow,
    /// A page of its attempts, oldest first.
    pub attempts: &'a Keyset<attempt::Model>,
    /// Operator actions on it, newest first.
    pub audit: &'a [Recorded],
    pub forms: &'a Forms,
    pub now_ms: i64,
}

fn dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// Attempts as a table: when, (which delivery,) the trigger, the error
/// category, the HTTP status, the latency, where it went (the URL at the
/// time, and a redirect's `Location`), the retry it scheduled, the detail
/// and the response excerpt (credentials were redacted before any of it
/// was stored).
pub fn attempts_table(attempts: &[attempt::Model], with_delivery: bool, now_ms: i64) -> Markup {
    html! {
        table #attempts {
            thead { tr {
                th { "Started" } @if with_delivery { th { "Delivery" } } th { "No." } th { "Trigger" }
                th { "Category" } th { "Status" } th { "Latency" } th { "Address" } th { "URL (redacted)" }
                th { "Next retry" } th { "Detail" }
                th { "Response excerpt (redacted)" }
            } }
            tbody {
                @for a in attempts {
                    tr data-attempt=(a.id) {
                        td.started { (when(now_ms, a.started_at)) }
                        @if with_delivery {
                            td { a href=(href("/dashboard/deliveries", &a.delivery_id)) { code { (a.delivery_id) } } }
                        }
                        td.num { (a.attempt_no) }
                        td.trigger { (a.trigger) }
                        td.category { (a.error_category.as_deref().unwrap_or("–")) }
                        td.num.status-code { (dash(a.status_code)) }
                        td.num.latency { (dash(a.latency_ms.map(|l| format!("{l} ms")))) }
                        td { (a.remote_addr.as_deref().unwrap_or("–")) }
                        td.wrap.url {
                            code { (a.url.as_deref().unwrap_or("–")) }
                            @if let Some(l) = &a.location { br; "Location: " code.location { (l) } }
                        }
                        td.next-retry { (when_or_dash(now_ms, a.next_attempt_at)) }
                        td.wrap { (a.error_detail.as_deref().unwrap_or("")) }
                        td.wrap.excerpt { (a.response_excerpt.as_deref().unwrap_or("")) }
                    }
                }
                @if attempts.is_empty() { tr { td colspan="12" { "No attempts yet." } } }
            }
        }
    }
}

pub fn delivery(v: &DeliveryView) -> Markup {
    let (d, now) = (v.delivery, v.now_ms);
    let due = matches!(d.state.as_str(), "pending" | "failed");
    object_page(
        "Delivery",
        &d.id,
        Nav::Search,
        v.forms,
        html! {
            dl.facts #facts {
                dt { "Event" } dd { a href=(href("/dashboard/events", &d.event_id)) { code { (d.event_id) } } " · " (d.event_type) }
                dt { "Endpoint" } dd { a href=(href("/dashboard/endpoints", &d.endpoint_id)) { code { (d.endpoint_id) } } }
                dt { "Partner" } dd { code { (v.partner_id) } }
                dt { "State" } dd #state { (d.state) @if let Some(r) = &d.reason { " (" (r) ")" } }
                dt { "Attempts" } dd #attempt-count { (d.attempt_count) }
                @if due { dt { "Next attempt" } dd #next-attempt { (when(now, d.next_attempt_at)) } }
                dt { "Last status" } dd { (dash(d.last_status)) " · " (d.last_error_category.as_deref().unwrap_or("no error")) }
                dt { "Created" } dd { (when(now, d.created_at)) }
                dt { "Updated" } dd { (when(now, d.updated_at)) }
            }
            h2 { "Replay" }
            div.actions {
                form #replay method="post" action={ (href("/dashboard/deliveries", &d.id)) "/replay" } {
                    (csrf_field(&v.forms.csrf))
                    p { "Send it again now as a manual attempt, with the same webhook-id; its state and schedule stay as they are." }
                    button type="submit" { "Replay" }
                }
            }
            h2 { "Attempts" }
            (attempts_table(&v.attempts.rows, false, now))
            (keyset_links("attempts", &href("/dashboard/deliveries", &d.id), &[], v.attempts))
            @if !v.audit.is_empty() {
                h2 { "Operator actions" }
                ul #audit {
                    @for a in v.audit {
                        li { (when(now, a.at)) " — " (a.action) " via " (a.via) " by " code { (a.key_id) } " from " (a.remote_addr) }
                    }
                }
            }
        },
    )
}
