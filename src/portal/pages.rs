//! The portal's frame and its small pages: pure functions from what is
//! shown to HTML. maud escapes every value, so nothing from the database
//! becomes markup. Every page of a signed-in partner has the navigation
//! and says once what the last action did (`flash`); every form that
//! changes something carries the session's CSRF token. The larger pages
//! have their own modules (`endpoint_page`, `delivery_page`, `event_page`).

use actix_web::{HttpResponse, http::StatusCode};
use maud::{Markup, html};

use super::{
    Signed, flash,
    form::{Draft, token_field},
    style::STYLE,
};
use crate::{http::partner::settings::PartnerSettings, web::chrome};

/// Which part of the portal a page belongs to, for the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Endpoints,
    Deliveries,
    Events,
    Notifications,
    Incidents,
    /// An error page: nothing is current.
    None,
}

/// A page of the portal, with the navigation when signed in.
fn layout(title: &str, signed: Option<(&Signed, Nav)>, body: Markup) -> Markup {
    let link = |href: &str, name: &str, this: Nav, nav: Nav| {
        html! { a href=(href) aria-current=[(nav == this).then_some("page")] { (name) } }
    };
    let body = html! {
        header {
            p.brand { "hookd · webhooks" }
            @if let Some((s, nav)) = signed {
                nav {
                    (link("/portal", "Endpoints", Nav::Endpoints, nav))
                    (link("/portal/deliveries", "Deliveries", Nav::Deliveries, nav))
                    (link("/portal/events", "Events", Nav::Events, nav))
                    (link("/portal/settings", "Notifications", Nav::Notifications, nav))
                    (link("/portal/incidents", "Incidents", Nav::Incidents, nav))
                }
                form method="post" action="/portal/logout" {
                    (token_field(&s.csrf))
                    button type="submit" { "Sign out" }
                }
            }
        }
        main {
            h2 { (title) }
            @if let Some((s, _)) = signed { (flash::shown(s.flash.as_ref())) }
            (body)
        }
    };
    chrome::document(title, " · hookd portal", STYLE, None, body)
}

/// A signed-in page of the part `nav`.
pub fn page(status: StatusCode, title: &str, nav: Nav, s: &Signed, body: Markup) -> HttpResponse {
    chrome::html(status, layout(title, Some((s, nav)), body))
}

/// A page with a title and one sentence (errors, refusals, not found):
/// with the navigation for a signed-in partner, without it otherwise.
pub fn message(status: StatusCode, title: &str, text: &str, s: Option<&Signed>) -> HttpResponse {
    let body = html! {
        p.error role="alert" { (text) }
        @if s.is_some() { p { a href="/portal" { "Back to your endpoints" } } }
    };
    chrome::html(status, layout(title, s.map(|s| (s, Nav::None)), body))
}

/// Why a sign-in was refused.
pub enum Refused<'a> {
    Said(&'a str),
    /// An operator's key: it opens the dashboard, not the portal.
    OperatorKey,
}

pub fn login(refused: Option<Refused>) -> Markup {
    layout(
        "Sign in",
        None,
        html! {
            section {
                form method="post" action="/portal/login" {
                    div.field {
                        label for="key" { "Partner key" }
                        input id="key" name="key" type="password" autocomplete="off" required
                            aria-invalid=[refused.is_some().then_some("true")];
                    }
                    @match refused {
                        Some(Refused::Said(e)) => { p.error #key-error role="alert" { (e) } }
                        Some(Refused::OperatorKey) => {
                            p.error #key-error role="alert" {
                                "That is an operator key: it signs in to the operator dashboard, not to the partner portal. "
                                a #to-dashboard href="/dashboard" { "Open the dashboard" }
                            }
                        }
                        None => {}
                    }
                    p.note { "Your partner key was given to you with your account; or ask for a one-time sign-in link." }
                    button type="submit" { "Sign in" }
                }
            }
        },
    )
}

pub fn link(partner_name: &str, token: &str) -> Markup {
    layout(
        "Sign in",
        None,
        html! {
            section {
                form method="post" action={ "/portal/link/" (token) } {
                    p { "Continue to the webhooks of " b { (partner_name) } "." }
                    button type="submit" { "Continue" }
                }
            }
        },
    )
}

pub fn link_spent() -> HttpResponse {
    message(
        StatusCode::GONE,
        "This link does not work",
        "A sign-in link works once, within 10 minutes. Ask for a new one.",
        None,
    )
}

/// The value of a settings field as sent (a refused form), else as saved.
fn setting(draft: &Draft, name: &str, saved: Option<&String>) -> String {
    draft.value(name, saved.cloned().unwrap_or_default())
}

/// The notification channel and its form (shown again as sent when refused).
pub fn settings(s: &PartnerSettings, signed: &Signed, draft: &Draft) -> HttpResponse {
    let email = setting(draft, "notification_email", s.notification_email.as_ref());
    let url = setting(draft, "notification_url", s.notification_url.as_ref());
    let body = html! {
        section {
            p { "Where hookd tells you that an endpoint is failing, was disabled or recovered." }
            form #settings-form method="post" action="/portal/settings" {
                (token_field(&signed.csrf))
                (draft.form_error("settings-form", &["notification_email", "notification_url"]))
                div.field {
                    label for="notification_email" { "Email" }
                    input #notification_email name="notification_email" type="email" value=(email)
                        aria-invalid=[draft.invalid("notification_email")];
                    (draft.error_at("notification_email"))
                }
                div.field {
                    label for="notification_url" { "Notification URL" }
                    input #notification_url name="notification_url" type="url" value=(url)
                        aria-invalid=[draft.invalid("notification_url")];
                    (draft.error_at("notification_url"))
                }
                @if let Some(id) = &s.notification_endpoint_id {
                    p.note { "Its deliveries and secret: " a href={ "/portal/endpoints/" (id) } { code { (id) } } }
                }
                p.note { "Leave a field empty to remove it." }
                button type="submit" { "Save" }
            }
        }
    };
    page(
        draft.status(),
        "Notifications",
        Nav::Notifications,
        signed,
        body,
    )
}
