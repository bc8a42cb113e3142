//! The summary cards of the overview and the endpoints page: endpoints by
//! status and deliveries by state, counting one partner's when the page is
//! filtered to it, each linking to what it counts.

use maud::{Markup, html};

use super::{when::when, with_query};
use crate::dashboard::reads::totals::Totals;

fn card(id: &str, n: i64, what: &str, link: Option<String>) -> Markup {
    html! {
        div.card id=(id) {
            b { (n) }
            @match link {
                Some(l) => { a href=(l) { (what) } }
                None => { (what) }
            }
        }
    }
}

/// `path` with `pairs` and the partner, when the cards count one.
fn scoped(path: &str, pairs: &[(&str, &str)], partner: Option<&str>) -> String {
    let mut all = pairs.to_vec();
    all.extend(partner.map(|p| ("partner_id", p)));
    with_query(path, &all)
}

/// The heading of a group of cards: whose they count.
pub fn heading(what: &str, partner: Option<&str>) -> Markup {
    html! {
        h2 { (what) @if let Some(p) = partner { " of partner " code.scope { (p) } } }
    }
}

/// Endpoints by status, each linking to the endpoints list of that status.
pub fn endpoint_cards(t: &Totals, partner: Option<&str>) -> Markup {
    html! {
        div.cards #endpoint-totals {
            @for (status, n) in t.endpoints {
                (card(&format!("endpoints-{status}"), n, status,
                    Some(scoped("/dashboard/endpoints", &[("status", status)], partner))))
            }
        }
    }
}

/// Deliveries by state, and events not yet fanned out.
pub fn delivery_cards(t: &Totals, partner: Option<&str>, now_ms: i64) -> Markup {
    let search = |state: &str| Some(scoped("/dashboard/search", &[("state", state)], partner));
    html! {
        div.cards #delivery-totals {
            (card("pending", t.waiting.pending, "deliveries pending", search("pending")))
            (card("failed", t.waiting.failed, "waiting to retry", search("failed")))
            (card("delivering", t.waiting.delivering, "being delivered", search("delivering")))
            (card("paused", t.stuck.paused, "paused (endpoint disabled)", search("paused")))
            (card("dead", t.stuck.dead, "dead", search("dead")))
            (card("saturated", t.stuck.saturated, "on their last two attempts", None))
            div.card #outbox { b { (t.unpublished) } "events waiting for fanout"
                @if let Some(oldest) = t.oldest_unpublished { br; small { "oldest received " (when(now_ms, oldest)) } } }
        }
    }
}

/// How many endpoints the cards count in all.
pub fn endpoint_count(t: &Totals) -> i64 {
    t.endpoints.iter().map(|(_, n)| n).sum()
}
