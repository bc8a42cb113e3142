//! The portal's pages: pure functions from what is shown to HTML. maud
//! escapes every value, so nothing from the database becomes markup. Every
//! form that changes something carries the session's CSRF token.

use actix_web::{HttpResponse, http::StatusCode};
use maud::{Markup, html};

use super::{
    auth_page::{self, scheme_select},
    form::{Draft, token_field},
    routing_page,
};
use crate::{
    http::partner::{
        auth_shapes::ReceiverAuthOut,
        deliveries::{AttemptOut, DeliveryOut, STATES},
        endpoints::EndpointOut,
        ordering::HeldSubjectOut,
        settings::PartnerSettings,
    },
    web::chrome,
};

const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{display:flex;gap:18px;align-items:center;padding:10px 24px;background:#0f3d3e;color:#fff}
header h1{font-size:16px;margin:0 12px 0 0}header a{color:#d7f5ee}
main{padding:16px 24px;max-width:1100px}
table{border-collapse:collapse;width:100%;background:#fff;margin:8px 0 16px}
th,td{border-bottom:1px solid #e3e7eb;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4}
section{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:8px 14px;margin:12px 0}
.secret{font:13px monospace;background:#fff7d6;padding:8px;border:1px solid #e7c85b;word-break:break-all}
.error{color:#b91c1c}.done{color:#166534}
pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px}
form.inline{display:inline}label{display:inline-block;min-width:130px}
";

/// A page of the portal, with the navigation when signed in.
fn layout(title: &str, signed: Option<&str>, body: Markup) -> Markup {
    let body = html! {
        header {
            h1 { "hookd · webhooks" }
            @if let Some(token) = signed {
                a href="/portal" { "Endpoints" }
                a href="/portal/deliveries" { "Deliveries" }
                a href="/portal/events" { "Events" }
                a href="/portal/settings" { "Notifications" }
                form.inline method="post" action="/portal/logout" {
                    (token_field(token))
                    button type="submit" { "Sign out" }
                }
            }
        }
        main { h2 { (title) } (body) }
    };
    chrome::document(title, " · hookd portal", STYLE, None, body)
}

/// A signed-in page.
pub fn page(status: StatusCode, title: &str, token: &str, body: Markup) -> HttpResponse {
    chrome::html(status, layout(title, Some(token), body))
}

/// A page with a title and one sentence (errors, refusals, not found).
pub fn message(status: StatusCode, title: &str, text: &str) -> HttpResponse {
    chrome::html(
        status,
        layout(title, None, html! { p.error role="alert" { (text) } }),
    )
}

pub fn login(error: Option<&str>) -> Markup {
    layout(
        "Sign in",
        None,
        html! {
            form method="post" action="/portal/login" {
                p { label for="key" { "Partner key" } }
                p { input id="key" name="key" type="password" autocomplete="off" size="60" required; }
                @if let Some(e) = error { p.error role="alert" { (e) } }
                p { button type="submit" { "Sign in" } }
            }
        },
    )
}

pub fn link(partner_name: &str, token: &str) -> Markup {
    layout(
        "Sign in",
        None,
        html! {
            form method="post" action={ "/portal/link/" (token) } {
                p { "Continue to the webhooks of " b { (partner_name) } "." }
                p { button type="submit" { "Continue" } }
            }
        },
    )
}

pub fn link_spent() -> HttpResponse {
    message(
        StatusCode::GONE,
        "This link does not work",
        "A sign-in link works once, within 10 minutes. Ask for a new one.",
    )
}

/// A secret, shown this once; or a `v1a` public key, which stays listed
/// on the endpoint's page.
pub fn secret_box(secret: &str) -> Markup {
    let said = if secret.starts_with("whpk_") {
        "Receivers verify deliveries with this public key (v1a); it is listed on this page."
    } else {
        "Copy this signing secret now; it is not shown again."
    };
    html! {
        p.done { (said) }
        p.secret #secret { (secret) }
    }
}

pub fn endpoints(list: &[EndpointOut], settings: &PartnerSettings, token: &str) -> HttpResponse {
    let body = html! {
        p { "Partner " b { (settings.name) } " (" code { (settings.id) } ")" }
        table #endpoints {
            tr { th { "Endpoint" } th { "URL" } th { "Status" } th { "Types" } th { "Failing since" } }
            @for e in list {
                tr data-endpoint=(e.id) {
                    td { a href={ "/portal/endpoints/" (e.id) } { (e.id) } @if e.kind != "endpoint" { " (" (e.kind) ")" } }
                    td { (e.url) }
                    td.status { (e.status) }
                    td { @if e.event_types.is_empty() { "all" } @else { (e.event_types.join(", ")) } }
                    td { (e.failing_since.as_deref().unwrap_or("")) }
                }
            }
        }
        section {
            h3 { "New endpoint" }
            form method="post" action="/portal/endpoints" {
                (token_field(token))
                p { label for="url" { "URL" } input #url name="url" type="url" size="60" required; }
                p { label for="event_types" { "Event types" } input #event_types name="event_types" size="60" placeholder="usage.*, balance.updated (empty: all)"; }
                p { label for="description" { "Description" } input #description name="description" size="60"; }
                p { (scheme_select("signature_scheme")) }
                p { button type="submit" { "Create" } }
            }
        }
    };
    page(StatusCode::OK, "Endpoints", token, body)
}

fn status_form(e: &EndpointOut, token: &str) -> Markup {
    let (action, label) = if e.status == "active" {
        ("disable", "Disable")
    } else {
        ("enable", "Enable")
    };
    html! {
        form.inline method="post" action={ "/portal/endpoints/" (e.id) "/" (action) } {
            (token_field(token)) button type="submit" { (label) }
        }
    }
}

/// What the endpoint page shows.
pub struct EndpointShown<'a> {
    pub endpoint: &'a EndpointOut,
    pub recent: &'a [DeliveryOut],
    pub auth: &'a ReceiverAuthOut,
    /// The subjects held up behind their heads.
    pub held: &'a [HeldSubjectOut],
    /// A form shown again as it was sent (a refusal, a filter test).
    pub draft: &'a Draft,
}

/// The endpoint page, with `shown` above it; a refused form makes it a 422.
pub fn endpoint(v: &EndpointShown, token: &str, shown: Markup) -> HttpResponse {
    let (e, draft) = (v.endpoint, v.draft);
    let base = format!("/portal/endpoints/{}", e.id);
    let body = html! {
        (shown)
        table #endpoint {
            tr { th { "URL" } td { (e.url) } }
            tr { th { "Status" } td.status { (e.status) @if let Some(r) = &e.disabled_reason { " (" (r) ")" } } }
            tr { th { "Event types" } td { @if e.event_types.is_empty() { "all" } @else { (e.event_types.join(", ")) } } }
            tr { th { "Description" } td { (e.description) } }
            tr { th { "Failing since" } td { (e.failing_since.as_deref().unwrap_or("not failing")) } }
            tr { th { "Ordering" } td #ordering-shown { (e.ordering) @if e.ordering == "subject" { " (a dead head: " (e.ordering_on_dead) ")" } } }
            tr { th { "Filter" } td #filter-shown { @match &e.filter {
                Some(_) => { pre { (routing_page::filter_text(e.filter.as_ref())) } }
                None => { "none: every event of its types" }
            } } }
        }
        section {
            (status_form(e, token))
            form.inline method="post" action={ (base) "/test" } { (token_field(token)) button type="submit" { "Send a test event" } }
            form.inline method="post" action={ (base) "/expire-previous" } { (token_field(token)) button type="submit" { "End the overlap" } }
            form method="post" action={ (base) "/rotate" } {
                (token_field(token)) input type="hidden" name="overlap_seconds" value="86400";
                (scheme_select("rotate_scheme")) " "
                button type="submit" { "Rotate the secret (previous one signs for 24 h)" }
            }
        }
        (auth_page::section(&base, v.auth, e.kind == "endpoint", token))
        @if e.kind == "endpoint" {
            section {
                h3 { "Edit" }
                form #edit-form method="post" action=(base) {
                    (token_field(token))
                    (draft.error_at("edit-form"))
                    p { label for="url" { "URL" } input #url name="url" type="url" size="60" value=(draft.value("url", e.url.clone())); }
                    (draft.error_at("url"))
                    p { label for="event_types" { "Event types" } input #event_types name="event_types" size="60" value=(draft.value("event_types", e.event_types.join(", "))); }
                    (draft.error_at("event_types"))
                    p { label for="description" { "Description" } input #description name="description" size="60" value=(draft.value("description", e.description.clone())); }
                    (draft.error_at("description"))
                    (routing_page::choices(e, draft))
                    p { button type="submit" { "Save" } }
                }
            }
            (routing_page::filter_section(&base, e, draft, token))
        }
        @if e.ordering == "subject" || !v.held.is_empty() {
            (routing_page::held_section(&base, v.held, token))
        }
        section {
            h3 { "Recover" }
            form method="post" action={ (base) "/recover" } {
                (token_field(token))
                p { "Send every failed or dead delivery created in this range again." }
                p { label for="since" { "Since (RFC 3339)" } input #since name="since" size="30" required placeholder="2026-12-01T00:00:00Z"; }
                p { label for="until" { "Until (empty: now)" } input #until name="until" size="30"; }
                p { button type="submit" { "Recover" } }
            }
        }
        h3 { "Recent deliveries" }
        (deliveries_table(v.recent))
    };
    let status = match draft.refusal {
        Some(_) => StatusCode::UNPROCESSABLE_ENTITY,
        None => StatusCode::OK,
    };
    page(status, &format!("Endpoint {}", e.id), token, body)
}

pub fn deliveries_table(list: &[DeliveryOut]) -> Markup {
    html! {
        table #deliveries {
            tr { th { "Delivery" } th { "Event" } th { "Type" } th { "State" } th { "Attempts" } th { "Last status" } th { "Created" } }
            @for d in list {
                tr data-delivery=(d.id) {
                    td { a href={ "/portal/deliveries/" (d.id) } { (d.id) } }
                    td { (d.event_id) } td { (d.event_type) }
                    td.state { (d.state) }
                    td { (d.attempt_count) }
                    td { (d.last_status.map(|s| s.to_string()).unwrap_or_default()) " " (d.last_error_category.as_deref().unwrap_or("")) }
                    td { (d.created_at) }
                }
            }
        }
    }
}

pub fn deliveries(list: &[DeliveryOut], next: Option<String>, token: &str) -> HttpResponse {
    let body = html! {
        form method="get" action="/portal/deliveries" {
            label for="state" { "State" }
            select #state name="state" {
                option value="" { "any" }
                @for s in STATES { option value=(s) { (s) } }
            }
            " " label for="endpoint_id" { "Endpoint" } input #endpoint_id name="endpoint_id" size="34";
            " " button type="submit" { "Search" }
        }
        (deliveries_table(list))
        @if let Some(next) = next { a href={ "/portal/deliveries?after=" (next) } { "Older" } }
    };
    page(StatusCode::OK, "Deliveries", token, body)
}

pub fn delivery(
    d: &DeliveryOut,
    attempts: &[AttemptOut],
    token: &str,
    shown: Markup,
) -> HttpResponse {
    let body = html! {
        (shown)
        p { "Event " code { (d.event_id) } " (" (d.event_type) ") to endpoint " a href={ "/portal/endpoints/" (d.endpoint_id) } { (d.endpoint_id) } ": " b.state { (d.state) } }
        @if let Some(r) = &d.reason { p { "Reason: " (r) } }
        form method="post" action={ "/portal/deliveries/" (d.id) "/replay" } { (token_field(token)) button type="submit" { "Send again now" } }
        table #attempts {
            tr { th { "#" } th { "Trigger" } th { "Started" } th { "Status" } th { "Category" } th { "Latency" } th { "Answer (redacted)" } }
            @for a in attempts {
                tr {
                    td { (a.attempt_no) } td { (a.trigger) } td { (a.started_at) }
                    td.status { (a.status_code.map(|s| s.to_string()).unwrap_or_default()) }
                    td.category { (a.error_category.as_deref().unwrap_or("")) }
                    td { (a.latency_ms.map(|l| format!("{l} ms")).unwrap_or_default()) }
                    td { pre { (a.response_excerpt.as_deref().unwrap_or("")) } }
                }
            }
        }
    };
    page(StatusCode::OK, &format!("Delivery {}", d.id), token, body)
}

pub fn events(list: &[serde_json::Value], next: &str, token: &str) -> HttpResponse {
    let body = html! {
        table #events {
            tr { th { "Event" } th { "Type" } th { "Occurred" } th { "Data" } }
            @for e in list {
                tr {
                    td { (e["id"].as_str().unwrap_or("")) }
                    td { (e["type"].as_str().unwrap_or("")) }
                    td { (e["occurred_at"].as_str().unwrap_or("")) }
                    td { pre { (e["data"].to_string()) } }
                }
            }
        }
        a href={ "/portal/events?after=" (next) } { "Newer" }
    };
    page(StatusCode::OK, "Events", token, body)
}

pub fn settings(s: &PartnerSettings, token: &str, shown: Markup) -> HttpResponse {
    let body = html! {
        (shown)
        p { "Where hookd tells you that an endpoint is failing, was disabled or recovered." }
        form method="post" action="/portal/settings" {
            (token_field(token))
            p { label for="notification_email" { "Email" } input #notification_email name="notification_email" type="email" size="40" value=(s.notification_email.as_deref().unwrap_or("")); }
            p { label for="notification_url" { "Notification URL" } input #notification_url name="notification_url" type="url" size="60" value=(s.notification_url.as_deref().unwrap_or("")); }
            p { "Leave a field empty to remove it." }
            p { button type="submit" { "Save" } }
        }
    };
    page(StatusCode::OK, "Notifications", token, body)
}
