//! The endpoint page's routing: the choice of ordering and of what a dead
//! head does (in the edit form), the payload filter as JSON (saved with the
//! endpoint, or tried on a sample event or one of the partner's events
//! without saving), and the subjects held up behind their heads, each with
//! Replay and Skip. A refused form is shown again as it was sent, with why
//! at its field.

use maud::{Markup, html};

use super::{
    badge,
    form::{Draft, token_field},
};
use crate::http::partner::{
    endpoint_shapes::EndpointOut, filters::FilterTested, ordering::HeldSubjectOut,
};

fn choice(value: &str, label: &str, chosen: &str) -> Markup {
    html! { option value=(value) selected[value == chosen] { (label) } }
}

/// The edit form's choices of ordering and of what a dead head does.
pub fn choices(e: &EndpointOut, draft: &Draft) -> Markup {
    let ordering = draft.value("ordering", e.ordering.clone());
    let on_dead = draft.value("ordering_on_dead", e.ordering_on_dead.clone());
    html! {
        div.field { label for="ordering" { "Ordering" }
            select #ordering name="ordering" aria-invalid=[draft.invalid("ordering")] {
                (choice("none", "none: deliveries go as they come", &ordering))
                (choice("subject", "subject: one at a time per subject, in commit order", &ordering))
            }
            (draft.error_at("ordering")) }
        div.field { label for="ordering_on_dead" { "When a head dies" }
            select #ordering_on_dead name="ordering_on_dead" aria-invalid=[draft.invalid("ordering_on_dead")] {
                (choice("skip", "skip: the subject's next delivery goes", &on_dead))
                (choice("hold", "hold: the subject waits until its head is replayed or skipped", &on_dead))
            }
            (draft.error_at("ordering_on_dead")) }
    }
}

/// A filter as its text box shows it: pretty JSON, or empty for none.
pub fn filter_text(filter: Option<&serde_json::Value>) -> String {
    filter
        .and_then(|f| serde_json::to_string_pretty(f).ok())
        .unwrap_or_default()
}

fn tested(t: &FilterTested) -> Markup {
    html! {
        p #filter-tested role="status" {
            @if t.matched {
                b.done { "Matched" } ": this event would get a delivery"
                @if t.filter.is_none() { " (no filter: every event of the endpoint's types)" }
                "."
            } @else {
                b.error { "Not matched" } " (" code { (t.reason.as_deref().unwrap_or("no_match")) } "): this event would get no delivery."
            }
        }
    }
}

/// The filter's form at `base`: the JSON to save, or to try first on a
/// sample envelope or an event id (the Test button posts the same form to
/// the test, so the draft is tried without being saved).
pub fn filter_section(base: &str, e: &EndpointOut, draft: &Draft, token: &str) -> Markup {
    let text = draft.value("filter", filter_text(e.filter.as_ref()));
    html! {
        section #filter {
            h3 { "Filter" }
            p { "Only events that pass the filter get a delivery; leave it empty for every event of the endpoint's types. "
                a href="/docs/filters" { "How to write one" } }
            form #filter-form method="post" action={ (base) "/filter/save" } {
                (token_field(token))
                (draft.form_error("filter-form", &["filter", "event", "event_id"]))
                div.field {
                    label for="filter_json" { "Filter (JSON)" }
                    textarea #filter_json name="filter" rows="6" spellcheck="false" aria-invalid=[draft.invalid("filter")]
                        placeholder=r#"{"field": "data.customer_id", "in": ["cus_1", "cus_3"]}"# { (text) }
                    (draft.error_at("filter"))
                }
                button #save-filter type="submit" { "Save the filter" }
                h4 { "Test it first" }
                p { "Paste a sample event (its " code { "type" } ", " code { "subject" } " and " code { "data" }
                    ") or give the id of one of your events: the filter in the box above is tried, not saved." }
                div.field {
                    label for="sample_event" { "Sample event (JSON)" }
                    textarea #sample_event name="event" rows="6" spellcheck="false" aria-invalid=[draft.invalid("event")]
                        placeholder=r#"{"type": "balance.updated", "data": {"customer_id": "cus_1"}}"# { (draft.value("event", String::new())) }
                    (draft.error_at("event"))
                }
                div.field {
                    label for="sample_event_id" { "or event id" }
                    input #sample_event_id name="event_id" value=(draft.value("event_id", String::new())) aria-invalid=[draft.invalid("event_id")];
                    (draft.error_at("event_id"))
                }
                button.secondary #test-filter type="submit" formaction={ (base) "/filter/test" } { "Test the filter" }
                @if let Some(t) = &draft.tested { (tested(t)) }
            }
        }
    }
}

/// The held subjects of the endpoint at `base`, each with Replay and (for a
/// dead head that holds its subject) Skip; times relative to `now_ms`.
pub fn held_section(
    base: &str,
    held: &[HeldSubjectOut],
    now_ms: i64,
    draft: &Draft,
    token: &str,
) -> Markup {
    html! {
        section #held {
            h3 { "Held subjects" }
            (draft.form_error("held-form", &[]))
            @if held.is_empty() {
                p { "No subject is held up: each one's next delivery goes when its turn comes." }
            } @else {
                div.scroll {
                    table #held-subjects {
                        tr { th { "Subject" } th { "Why" } th { "Head delivery" } th { "Waiting" } th { "Since" } th { "Release" } }
                        @for h in held {
                            tr data-delivery=(h.head.delivery_id) {
                                td.subject { code { (h.subject.subject_type) "/" (h.subject.id) } }
                                td.wide { span.held-by { (badge::held_by(&h.held_by)) } " " (h.detail) }
                                td { a href={ "/portal/deliveries/" (h.head.delivery_id) } { code { (h.head.delivery_id) } }
                                    " " (badge::state(&h.head.state)) " " (h.head.attempt_count) " attempts" }
                                td.waiting { (h.waiting) }
                                td { (badge::time(now_ms, Some(&h.since))) }
                                td { div.actions {
                                    form method="post" action={ (base) "/held/" (h.head.delivery_id) "/replay" } {
                                        (token_field(token)) button type="submit" { "Replay" }
                                    }
                                    @if h.held_by == "dead_head" {
                                        form method="post" action={ (base) "/held/" (h.head.delivery_id) "/skip" } {
                                            (token_field(token)) button.secondary type="submit" { "Skip" }
                                        }
                                    }
                                } }
                            }
                        }
                    }
                }
            }
        }
    }
}
