//! The endpoints of every partner, filtered by partner, status, open
//! circuit and backlog, and sorted by failing-since, backlog or partner.

use maud::{Markup, html};

use super::{Nav, at, circuit_badge, href, page};
use crate::{
    http::observe::stored_circuit,
    store::endpoint_views::{Choice, Filter, Sort, Standing, StatusFilter},
};

/// The status as operators speak of it: `failing` is an active endpoint
/// with a `failing_since`.
pub fn status_of(e: &Standing) -> &str {
    if e.status == "active" && e.failing_since.is_some() {
        "failing"
    } else {
        &e.status
    }
}

fn sort_label(s: Sort) -> &'static str {
    match s {
        Sort::FailingSince => "failing longest first",
        Sort::Backlog => "most held first",
        Sort::Partner => "partner",
    }
}

fn filters(f: &Filter, sort: Sort) -> Markup {
    html! {
        form.filters #filters method="get" action="/dashboard/endpoints" {
            label { "Partner" input name="partner_id" value=[f.partner_id.as_deref()] placeholder="ptn_…"; }
            label { "Status"
                select name="status" {
                    option value="" { "any" }
                    @for s in StatusFilter::all() {
                        option value=(s.as_str()) selected[f.status == Some(s)] { (s.as_str()) }
                    }
                }
            }
            label { "Circuit"
                span { input type="checkbox" name="circuit" value="open" checked[f.open_circuit]; " open or half open" }
            }
            label { "Backlog"
                span { input type="checkbox" name="backlog" value="1" checked[f.with_backlog]; " holds deliveries" }
            }
            label { "Sort"
                select name="sort" {
                    @for s in Sort::all() {
                        option value=(s.as_str()) selected[sort == s] { (sort_label(s)) }
                    }
                }
            }
            button type="submit" { "Show" }
        }
    }
}

fn row(e: &Standing, now_ms: i64) -> Markup {
    let status = status_of(e);
    let circuit = stored_circuit(e.circuit.open_until_ms, now_ms);
    html! {
        tr data-endpoint=(e.id) {
            td { a href=(href("/dashboard/endpoints", &e.id)) { code { (e.id) } } }
            td.partner { code { (e.partner_id) } }
            td.wrap { (e.url) }
            td { (e.kind) }
            td { span class={ "status " (status) } { (status) }
                @if let Some(since) = e.failing_since { br; small.failing-since { "since " (at(since)) } } }
            td { (circuit_badge(circuit, e.circuit.open_until_ms)) }
            td.num.failures { (e.circuit.consecutive_failures) }
            td.num.waiting { (e.waiting) }
            td.num.paused { (e.paused) }
            td.owner { code { (e.owner.as_deref().unwrap_or("–")) } }
        }
    }
}

/// The list, with the filters it was asked with; `limit`: how many rows
/// a page shows at most.
pub fn endpoints(rows: &[Standing], f: &Filter, sort: Sort, limit: u32, now_ms: i64) -> Markup {
    page(
        "Endpoints",
        Nav::Endpoints,
        None,
        html! {
            h2 { "Endpoints" }
            (filters(f, sort))
            p #count { (rows.len()) " endpoints"
                @if rows.len() >= limit as usize { " (the first " (limit) "; narrow the filters)" } }
            table #endpoints {
                thead { tr {
                    th { "Endpoint" } th { "Partner" } th { "URL" } th { "Kind" } th { "Status" }
                    th { "Circuit (stored)" } th { "Failures" } th { "Waiting" } th { "Paused" } th { "Owner" }
                } }
                tbody {
                    @for e in rows { (row(e, now_ms)) }
                    @if rows.is_empty() { tr { td colspan="10" { "No endpoints match." } } }
                }
            }
        },
    )
}
