//! One endpoint's page: what it is (status badge, types, ordering,
//! filter), the result of the test event just sent, its action buttons
//! (enable or disable, test, rotate the secret, end the overlap), its
//! credentials, edit, filter, held subjects and recovery forms, and its
//! recent deliveries. A refused form comes back as it was sent, with why at
//! its field.

use actix_web::HttpResponse;
use maud::{Markup, html};

use super::{
    Signed, auth_page,
    auth_page::scheme_select,
    badge,
    delivery_page::deliveries_table,
    endpoints_page::types_text,
    form::{Draft, token_field},
    pages::{Nav, page},
    routing_page,
};
use crate::http::partner::{
    auth_shapes::ReceiverAuthOut, deliveries::DeliveryOut, endpoints::EndpointOut,
    ordering::HeldSubjectOut,
};

/// What the endpoint page shows.
pub struct EndpointShown<'a> {
    pub endpoint: &'a EndpointOut,
    pub recent: &'a [DeliveryOut],
    pub auth: &'a ReceiverAuthOut,
    /// The subjects held up behind their heads.
    pub held: &'a [HeldSubjectOut],
    /// The delivery of the test event just sent, as it is now.
    pub test: Option<&'a DeliveryOut>,
    /// A form shown again as it was sent (a refusal, a filter test).
    pub draft: &'a Draft,
}

/// A button alone in its form, posting to `action`.
fn button_form(action: &str, label: &str, class: &str, token: &str) -> Markup {
    html! {
        form method="post" action=(action) {
            (token_field(token)) button class=(class) type="submit" { (label) }
        }
    }
}

/// The test delivery as it is now: still on its way, or its result.
fn test_result(d: &DeliveryOut, now_ms: i64) -> Markup {
    let going = matches!(d.state.as_str(), "pending" | "delivering" | "waiting");
    html! {
        section #test-result role="status" {
            h3 { "Test event" }
            p {
                "Test event " code { (d.event_id) } ": delivery "
                a href={ "/portal/deliveries/" (d.id) } { code { (d.id) } } " "
                span.state { (badge::state(&d.state)) }
                @if d.attempt_count > 0 {
                    " · answer " (badge::answer(d.last_status, d.last_error_category.as_deref()))
                    @if let Some(ms) = d.last_latency_ms { " in " (ms) " ms" }
                }
            }
            @if going {
                p.note #test-pending { "Not answered yet: reload this page to see the result." }
            } @else if d.state == "failed" {
                p.note { "It failed; hookd tries again " (badge::time(now_ms, d.next_attempt_at.as_deref())) ". "
                    a href={ "/portal/deliveries/" (d.id) } { "See every attempt" } }
            }
        }
    }
}

fn facts(e: &EndpointOut, now_ms: i64) -> Markup {
    html! {
        div.scroll {
            table.facts #endpoint {
                tr { th { "URL" } td { (e.url) } }
                tr { th { "Status" } td.status { (badge::endpoint(e)) @if let Some(r) = &e.disabled_reason { " " span.note { (r) } } } }
                tr { th { "Event types" } td { (types_text(&e.event_types)) } }
                tr { th { "Description" } td { @if e.description.is_empty() { span.note { "none" } } @else { (e.description) } } }
                tr { th { "Failing since" } td { @match &e.failing_since { Some(t) => { (badge::time(now_ms, Some(t))) } None => { "not failing" } } } }
                tr { th { "Ordering" } td #ordering-shown { (e.ordering) @if e.ordering == "subject" { " (a dead head: " (e.ordering_on_dead) ")" } } }
                tr { th { "Filter" } td #filter-shown { @match &e.filter {
                    Some(_) => { pre { (routing_page::filter_text(e.filter.as_ref())) } }
                    None => { "none: every event of its types" }
                } } }
                tr { th { "Created" } td { (badge::time(now_ms, Some(&e.created_at))) } }
            }
        }
    }
}

/// Enable or disable, send a test, end the overlap, rotate the secret.
fn actions(e: &EndpointOut, base: &str, draft: &Draft, token: &str) -> Markup {
    let (action, label) = if e.status == "active" {
        ("disable", "Disable")
    } else {
        ("enable", "Enable")
    };
    let forms = ["status-form", "test-form", "expire-form", "rotate-form"];
    html! {
        section #actions {
            h3 { "Actions" }
            @for f in forms { (draft.form_error(f, &[])) }
            div.actions {
                (button_form(&format!("{base}/test"), "Send a test event", "", token))
                (button_form(&format!("{base}/{action}"), label, if action == "disable" { "danger" } else { "" }, token))
                (button_form(&format!("{base}/expire-previous"), "End the overlap", "secondary", token))
            }
            form #rotate-form method="post" action={ (base) "/rotate" } {
                (token_field(token)) input type="hidden" name="overlap_seconds" value="86400";
                div.field { (scheme_select("rotate_scheme")) }
                button.secondary type="submit" { "Rotate the secret" }
                " " span.note { "The previous one signs for 24 h." }
            }
        }
    }
}

fn edit(e: &EndpointOut, base: &str, draft: &Draft, token: &str) -> Markup {
    let field = |name: &str, label: &str, kind: &str, saved: String| {
        html! {
            div.field {
                label for=(name) { (label) }
                input id=(name) name=(name) type=(kind) value=(draft.value(name, saved))
                    aria-invalid=[draft.invalid(name)];
                (draft.error_at(name))
            }
        }
    };
    html! {
        section #edit {
            h3 { "Edit" }
            form #edit-form method="post" action=(base) {
                (token_field(token))
                (draft.form_error("edit-form", &["url", "event_types", "description", "ordering", "ordering_on_dead"]))
                (field("url", "URL", "url", e.url.clone()))
                (field("event_types", "Event types", "text", e.event_types.join(", ")))
                (field("description", "Description", "text", e.description.clone()))
                (routing_page::choices(e, draft))
                button type="submit" { "Save" }
            }
        }
    }
}

fn recover(base: &str, draft: &Draft, token: &str) -> Markup {
    html! {
        section #recover {
            h3 { "Recover" }
            form #recover-form method="post" action={ (base) "/recover" } {
                (token_field(token))
                p { "Send every failed or dead delivery created in this range again." }
                (draft.form_error("recover-form", &["since", "until"]))
                div.field {
                    label for="since" { "Since (RFC 3339)" }
                    input #since name="since" required placeholder="2026-12-01T00:00:00Z"
                        value=(draft.value("since", String::new())) aria-invalid=[draft.invalid("since")];
                    (draft.error_at("since"))
                }
                div.field {
                    label for="until" { "Until (empty: now)" }
                    input #until name="until" value=(draft.value("until", String::new())) aria-invalid=[draft.invalid("until")];
                    (draft.error_at("until"))
                }
                button type="submit" { "Recover" }
            }
        }
    }
}

/// The endpoint page; a refused form makes it answer with the refusal's status.
pub fn endpoint(v: &EndpointShown, s: &Signed) -> HttpResponse {
    let (e, draft, token) = (v.endpoint, v.draft, s.csrf.as_str());
    let base = format!("/portal/endpoints/{}", e.id);
    let body = html! {
        @if let Some(t) = v.test { (test_result(t, s.now_ms)) }
        (facts(e, s.now_ms))
        (actions(e, &base, draft, token))
        (auth_page::section(&base, v.auth, e.kind == "endpoint", token, draft))
        @if e.kind == "endpoint" {
            (edit(e, &base, draft, token))
            (routing_page::filter_section(&base, e, draft, token))
        }
        @if e.ordering == "subject" || !v.held.is_empty() {
            (routing_page::held_section(&base, v.held, s.now_ms, draft, token))
        }
        (recover(&base, draft, token))
        h3 { "Recent deliveries" }
        (deliveries_table(v.recent, s.now_ms))
    };
    page(
        draft.status(),
        &format!("Endpoint {}", e.id),
        Nav::Endpoints,
        s,
        body,
    )
}
