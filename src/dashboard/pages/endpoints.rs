//! The endpoints of every partner, filtered by partner, status, open
//! circuit and backlog, sorted by failing-since, backlog or partner, in
//! numbered pages; the cards above count the partner filtered to.

use maud::{Markup, html};

use std::collections::HashMap;

use super::{Nav, badges, cards, href, page, pager::numbered_links, when::when};
use crate::{
    dashboard::{health, reads::totals::Totals},
    delivery::report::ActorReport,
    store::endpoint_views::{Choice, Filter, Sort, Standing, StatusFilter},
};

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

fn row(e: &Standing, actor: Option<&ActorReport>, now_ms: i64) -> Markup {
    let h = health::of_standing(e, actor, now_ms);
    html! {
        tr data-endpoint=(e.id) {
            td { a href=(href("/dashboard/endpoints", &e.id)) { code { (e.id) } } }
            td.partner { code { (e.partner_id) } }
            td.wrap { span.clip title=(e.url) { (e.url) } }
            td { (e.kind) }
            td { (badges::status(h.status))
                @if let Some(since) = e.failing_since { br; small.failing-since { "since " (when(now_ms, since)) } } }
            td.circuit-cell { (badges::circuit(h.circuit, now_ms)) }
            td.num.failures { (h.consecutive_failures) }
            td.num.waiting { (e.waiting) }
            td.num.paused { (e.paused) }
            td.owner { code { (e.owner.as_deref().unwrap_or("–")) } }
        }
    }
}

/// Everything the endpoints page shows.
pub struct EndpointsView<'a> {
    /// This page's rows.
    pub rows: &'a [Standing],
    /// The reports of the endpoint actors in this instance, by endpoint.
    pub actors: &'a HashMap<String, ActorReport>,
    pub filter: &'a Filter,
    pub sort: Sort,
    /// The cards' numbers: of the partner filtered to, else of all.
    pub totals: &'a Totals,
    /// This page's number (from 1) and how many rows a page holds.
    pub page: (u32, u32),
    /// Whether a next page exists.
    pub more: bool,
    pub now_ms: i64,
}

/// The query of the list as asked, for the links between its pages.
fn pairs(f: &Filter, sort: Sort) -> Vec<(&'static str, &str)> {
    let mut out = Vec::new();
    out.extend(f.partner_id.as_deref().map(|p| ("partner_id", p)));
    out.extend(f.status.map(|s| ("status", s.as_str())));
    if f.open_circuit {
        out.push(("circuit", "open"));
    }
    if f.with_backlog {
        out.push(("backlog", "1"));
    }
    out.push(("sort", sort.as_str()));
    out
}

/// The list, with the filters it was asked with and its page links.
pub fn endpoints(v: &EndpointsView) -> Markup {
    let (f, partner) = (v.filter, v.filter.partner_id.as_deref());
    let (number, size) = v.page;
    let links = numbered_links(
        "endpoints",
        "/dashboard/endpoints",
        &pairs(f, v.sort),
        (number, size, v.rows.len()),
        v.more,
    );
    page(
        "Endpoints",
        Nav::Endpoints,
        None,
        html! {
            (cards::heading("Endpoints", partner))
            (cards::endpoint_cards(v.totals, partner))
            (cards::heading("Deliveries", partner))
            (cards::delivery_cards(v.totals, partner, v.now_ms))
            h2 { "The list" }
            (filters(f, v.sort))
            table #endpoints {
                thead { tr {
                    th { "Endpoint" } th { "Partner" } th { "URL" } th { "Kind" } th { "Status" }
                    th { "Circuit" } th { "Failures" } th { "Waiting" } th { "Paused" } th { "Owner" }
                } }
                tbody {
                    @for e in v.rows { (row(e, v.actors.get(&e.id), v.now_ms)) }
                    @if v.rows.is_empty() { tr { td colspan="10" { "No endpoints match." } } }
                }
            }
            (links)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_links_keep_the_filters_and_the_sort() {
        let f = Filter {
            partner_id: Some("ptn_1".into()),
            status: Some(StatusFilter::Failing),
            open_circuit: true,
            with_backlog: false,
        };
        let html = numbered_links(
            "endpoints",
            "/dashboard/endpoints",
            &pairs(&f, Sort::Backlog),
            (2, 50, 50),
            true,
        )
        .into_string();
        let query = "partner_id=ptn_1&amp;status=failing&amp;circuit=open&amp;sort=backlog";
        assert!(
            html.contains(&format!(
                r#"rel="next" href="/dashboard/endpoints?{query}&amp;page=3#endpoints""#
            )),
            "{html}"
        );
        assert!(
            html.contains(&format!(
                r#"rel="prev" href="/dashboard/endpoints?{query}#endpoints""#
            )),
            "page 1 is the list without a page: {html}"
        );
        assert!(html.contains("showing 51–100"), "{html}");
        let last = numbered_links("endpoints", "/x", &[], (1, 50, 3), false).into_string();
        assert!(!last.contains("rel="), "one page, no links: {last}");
    }
}
