//! An endpoint's routing, for the operator: whether it orders deliveries
//! per subject and what a dead head does, its payload filter (pretty JSON,
//! escaped like everything else), and the subjects held up behind their
//! heads, each with Replay and, for a dead head that holds its subject,
//! Skip (both audited as the operator API's).

use maud::{Markup, html};

use super::{csrf_field, href};
use crate::http::partner::ordering::HeldSubjects;

/// What the routing block shows.
pub struct Routing {
    /// The ordering, what a dead head does, and the held subjects.
    pub held: HeldSubjects,
    pub filter: Option<serde_json::Value>,
}

fn held_table(h: &HeldSubjects, csrf: &str) -> Markup {
    html! {
        @if h.data.is_empty() {
            p.note #no-held { "No subject is held up." }
        } @else {
            table #held-subjects {
                tr { th { "Subject" } th { "Held by" } th { "Head delivery" } th { "Waiting" } th { "Since" } th { "Actions" } }
                @for s in &h.data {
                    @let head = href("/dashboard/deliveries", &s.head.delivery_id);
                    tr data-delivery=(s.head.delivery_id) {
                        td { code { (s.subject.subject_type) "/" (s.subject.id) } }
                        td.wrap { b { (s.held_by) } ": " (s.detail) }
                        td { a href=(head) { (s.head.delivery_id) } " · " (s.head.state) " · " (s.head.attempt_count) " attempts" }
                        td.num { (s.waiting) }
                        td { (s.since) }
                        td {
                            form.inline method="post" action={ (head) "/replay" } {
                                (csrf_field(csrf)) input type="hidden" name="back" value="endpoint";
                                button type="submit" { "Replay" }
                            }
                            @if s.held_by == "dead_head" {
                                " "
                                form.inline method="post" action={ (head) "/skip" } {
                                    (csrf_field(csrf)) button type="submit" { "Skip" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

pub fn routing(r: &Routing, csrf: &str) -> Markup {
    let h = &r.held;
    let pretty = r
        .filter
        .as_ref()
        .and_then(|f| serde_json::to_string_pretty(f).ok());
    html! {
        dl.facts #routing {
            dt { "Ordering" } dd #ordering { (h.ordering)
                @if h.ordering == "subject" { " · a dead head: " (h.ordering_on_dead) } }
            dt { "Filter" } dd #filter {
                @match &pretty {
                    Some(f) => { pre { (f) } }
                    None => { "none: every event of its types" }
                }
            }
        }
        @if h.ordering == "subject" || !h.data.is_empty() {
            h2 { "Held subjects" }
            (held_table(h, csrf))
        }
    }
}
