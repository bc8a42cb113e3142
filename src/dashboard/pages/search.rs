//! Delivery search across partners: by event id, delivery id, endpoint,
//! partner, state and time range, newest first, each linking to its page.

use maud::{Markup, html};
use serde::Deserialize;

use super::{Nav, href, page, pager::keyset_links, when::when};
use crate::{
    dashboard::paging::Keyset, http::partner::deliveries::STATES, store::scoped::DeliveryRow,
};

/// The search as typed (echoed back into the form, escaped).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SearchForm {
    pub event_id: String,
    pub delivery_id: String,
    pub endpoint_id: String,
    pub partner_id: String,
    pub state: String,
    /// UTC, RFC 3339 or `YYYY-MM-DDTHH:MM`.
    pub since: String,
    pub until: String,
    /// The page's start: just before (older than) or just after (newer
    /// than) a row, as the page links say (cursors).
    pub before: String,
    pub after: String,
}

impl SearchForm {
    /// The filled fields, for the links to other pages.
    fn pairs(&self) -> Vec<(&'static str, &str)> {
        [
            ("event_id", self.event_id.as_str()),
            ("delivery_id", &self.delivery_id),
            ("endpoint_id", &self.endpoint_id),
            ("partner_id", &self.partner_id),
            ("state", &self.state),
            ("since", &self.since),
            ("until", &self.until),
        ]
        .into_iter()
        .filter(|(_, v)| !v.trim().is_empty())
        .collect()
    }
}

fn field(name: &str, label: &str, value: &str, placeholder: &str) -> Markup {
    html! {
        label { (label) input name=(name) value=(value) placeholder=(placeholder) size="28"; }
    }
}

fn form(f: &SearchForm) -> Markup {
    html! {
        form.filters #search method="get" action="/dashboard/search" {
            (field("event_id", "Event id", &f.event_id, "evt_…"))
            (field("delivery_id", "Delivery id", &f.delivery_id, "dlv_…"))
            (field("endpoint_id", "Endpoint id", &f.endpoint_id, "ep_…"))
            (field("partner_id", "Partner", &f.partner_id, "ptn_…"))
            label { "State"
                select name="state" {
                    option value="" { "any" }
                    @for s in STATES { option value=(s) selected[f.state == s] { (s) } }
                }
            }
            (field("since", "Created since (UTC)", &f.since, "2026-12-02T00:00:00Z"))
            (field("until", "Created before (UTC)", &f.until, "2026-12-02T12:00:00Z"))
            button type="submit" { "Search" }
        }
    }
}

/// The form and what it found (a page of partner id and delivery, newest
/// first); `error` when the search could not be read.
pub fn search(
    f: &SearchForm,
    found: &Keyset<(String, DeliveryRow)>,
    error: Option<&str>,
    now_ms: i64,
) -> Markup {
    let rows = &found.rows;
    page(
        "Search",
        Nav::Search,
        None,
        html! {
            h2 { "Search deliveries" }
            (form(f))
            @if let Some(e) = error { p.error role="alert" { (e) } }
            table #deliveries {
                thead { tr {
                    th { "Delivery" } th { "Event" } th { "Type" } th { "Endpoint" } th { "Partner" }
                    th { "State" } th { "Attempts" } th { "Last status" } th { "Category" } th { "Created" }
                } }
                tbody {
                    @for (partner, d) in rows {
                        tr data-delivery=(d.id) {
                            td { a href=(href("/dashboard/deliveries", &d.id)) { code { (d.id) } } }
                            td { a href=(href("/dashboard/events", &d.event_id)) { code { (d.event_id) } } }
                            td { (d.event_type) }
                            td { a href=(href("/dashboard/endpoints", &d.endpoint_id)) { code { (d.endpoint_id) } } }
                            td { code { (partner) } }
                            td.state { (d.state) }
                            td.num { (d.attempt_count) }
                            td.num { (d.last_status.map_or_else(|| "–".to_string(), |s| s.to_string())) }
                            td { (d.last_error_category.as_deref().unwrap_or("–")) }
                            td { (when(now_ms, d.created_at)) }
                        }
                    }
                    @if rows.is_empty() && error.is_none() { tr { td colspan="10" { "No deliveries match." } } }
                }
            }
            (keyset_links("deliveries", "/dashboard/search", &f.pairs(), found))
        },
    )
}
