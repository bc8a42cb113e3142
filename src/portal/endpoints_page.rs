//! The portal's home: the partner's endpoints, each with its status as a
//! badge, and the form that creates one (shown again as sent, with why at
//! its field, when it is refused).

use actix_web::HttpResponse;
use maud::{Markup, html};

use super::{
    Signed,
    auth_page::scheme_select,
    badge,
    form::{Draft, token_field},
    pages::{Nav, page},
};
use crate::http::partner::{endpoints::EndpointOut, settings::PartnerSettings};

/// The fields of the create form that show their own refusal.
const CREATE_FIELDS: [&str; 3] = ["url", "event_types", "description"];

/// An endpoint's event types as a list reads (`all` for none).
pub fn types_text(types: &[String]) -> String {
    if types.is_empty() {
        "all".to_string()
    } else {
        types.join(", ")
    }
}

fn create_form(s: &Signed, draft: &Draft) -> Markup {
    let field = |name: &str, label: &str, kind: &str, hint: &str| {
        html! {
            div.field {
                label for=(name) { (label) }
                input id=(name) name=(name) type=(kind) placeholder=(hint)
                    value=(draft.value(name, String::new()))
                    aria-invalid=[draft.invalid(name)]
                    required[name == "url"];
                (draft.error_at(name))
            }
        }
    };
    html! {
        section #new-endpoint {
            h3 { "New endpoint" }
            form #create-form method="post" action="/portal/endpoints" {
                (token_field(&s.csrf))
                (draft.form_error("create-form", &CREATE_FIELDS))
                (field("url", "URL", "url", "https://example.com/webhooks"))
                (field("event_types", "Event types", "text", "usage.*, balance.updated (empty: all)"))
                (field("description", "Description", "text", "optional"))
                div.field { (scheme_select("signature_scheme")) }
                button type="submit" { "Create the endpoint" }
            }
        }
    }
}

/// The endpoints, and the create form as `draft` has it.
pub fn endpoints(
    list: &[EndpointOut],
    settings: &PartnerSettings,
    s: &Signed,
    draft: &Draft,
) -> HttpResponse {
    let body = html! {
        p.note { "Partner " b { (settings.name) } " (" code { (settings.id) } ")" }
        @if list.is_empty() {
            section { p #no-endpoints { "No endpoint yet: create one below, and hookd sends your events to it." } }
        } @else {
            div.scroll {
                table #endpoints {
                    tr { th { "Endpoint" } th { "URL" } th { "Status" } th { "Event types" } th { "Failing since" } th { "Created" } }
                    @for e in list {
                        tr data-endpoint=(e.id) {
                            td { a href={ "/portal/endpoints/" (e.id) } { code { (e.id) } } @if e.kind != "endpoint" { " (" (e.kind) ")" } }
                            td.url { (e.url) }
                            td.status { (badge::endpoint(e)) }
                            td { (types_text(&e.event_types)) }
                            td { @match &e.failing_since { Some(t) => { (badge::time(s.now_ms, Some(t))) } None => { "not failing" } } }
                            td { (badge::time(s.now_ms, Some(&e.created_at))) }
                        }
                    }
                }
            }
        }
        (create_form(s, draft))
    };
    page(draft.status(), "Endpoints", Nav::Endpoints, s, body)
}
