//! The dashboard's pages: pure functions from what is shown to HTML. maud
//! escapes every interpolated value, so ids, URLs and excerpts from the
//! database cannot become markup. This module holds the frame every page
//! shares (header, navigation, style) and the sign-in and error pages; each
//! page has its own module.

pub mod badges;
pub mod cards;
pub mod credentials;
pub mod delivery;
pub mod endpoint;
pub mod endpoints;
pub mod event;
pub mod incidents;
pub mod json;
pub mod overview;
pub mod pager;
pub mod routing;
pub mod search;
pub mod secrets;

/// The relative times every page shows live in `web::when` (the portal
/// shows them too); dashboard code names them here as before.
pub use crate::web::when::{self, at};

use maud::{Markup, html};
use serde::Deserialize;

use crate::web::csrf;

const STYLE: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{display:flex;gap:24px;align-items:center;padding:12px 24px;background:#1b1f24;color:#fff}
header h1{font-size:16px;margin:0}
header nav{display:flex;gap:16px;flex:1}
header a{color:#cfd6dd;text-decoration:none}header a[aria-current]{color:#fff;font-weight:600}
main{padding:16px 24px}
h2{font-size:16px;margin:20px 0 8px}
a{color:#1d4ed8}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:16px}
.card{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px 14px;min-width:140px}
.card b{display:block;font-size:22px}
.card a{color:inherit}
table{border-collapse:collapse;width:100%;background:#fff;margin-bottom:16px}
th,td{border-bottom:1px solid #e3e7eb;padding:6px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.wrap{white-space:pre-wrap;overflow-wrap:anywhere;min-width:10em}
td.num{white-space:nowrap}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:anywhere;word-break:break-all}
.clip{display:block;max-width:32em;max-height:6.2em;overflow:hidden;text-overflow:ellipsis}
pre.json{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px 14px;margin:0 0 16px;white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}
.secret{background:#fff7e0;border:1px solid #e8c66a;border-radius:6px;padding:8px 12px}
input{max-width:100%}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px 14px}
dl.facts dt{font-weight:600}dl.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(420px,100%),1fr));gap:12px}
.charts figure{margin:0;background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:6px}
.circuit{padding:1px 8px;border-radius:10px;font-size:12px}
.circuit.closed{background:#dff3e4}.circuit.open{background:#fbd9d9}.circuit.half_open{background:#fff1c7}
.status.disabled,.status.paused,.status.failing{color:#9a3412}
.error{color:#b91c1c}
.done{background:#dff3e4;border:1px solid #9fd5ad;border-radius:6px;padding:8px 12px}
.actions{display:flex;gap:12px;flex-wrap:wrap}
.actions form{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px 14px}
form.filters{display:flex;gap:12px;flex-wrap:wrap;align-items:end;margin-bottom:12px}
form.filters label{display:flex;flex-direction:column;font-size:12px}
form.inline{display:inline}
nav.pager{display:flex;gap:16px;align-items:baseline;margin:-8px 0 16px}
.scope{font-weight:600}
p.note{color:#4b5563;margin:4px 0 12px}
time[title]{text-decoration:underline dotted #9ca3af;text-underline-offset:3px}
";

/// Which part of the dashboard a page belongs to, for the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Overview,
    Endpoints,
    Search,
    /// An error page: nothing is current.
    None,
}

fn layout(title: &str, refresh: Option<u32>, body: Markup) -> Markup {
    crate::web::chrome::document(title, " · hookd", STYLE, refresh, body)
}

/// A signed-in page: the header with the navigation and the sign-out
/// form, then `body`. `refresh`: reload every so many seconds.
pub fn page(title: &str, nav: Nav, refresh: Option<u32>, body: Markup) -> Markup {
    let link = |href: &str, name: &str, this: Nav| {
        html! { a href=(href) aria-current=[(nav == this).then_some("page")] { (name) } }
    };
    layout(
        title,
        refresh,
        html! {
            header {
                h1 { "hookd · operator dashboard" }
                nav {
                    (link("/dashboard", "Overview", Nav::Overview))
                    (link("/dashboard/endpoints", "Endpoints", Nav::Endpoints))
                    (link("/dashboard/search", "Search", Nav::Search))
                    a href="/docs" { "Docs" }
                }
                form.inline method="post" action="/dashboard/logout" { button type="submit" { "Sign out" } }
            }
            main { (body) }
        },
    )
}

/// The login form, with an error when the last try failed.
pub fn login(error: Option<&str>) -> Markup {
    layout(
        "Sign in",
        None,
        html! {
            header { h1 { "hookd · operator dashboard" } }
            main {
                form method="post" action="/dashboard/login" {
                    p { label for="key" { "Operator key" } }
                    p { input id="key" name="key" type="password" autocomplete="off" size="60" required; }
                    @if let Some(e) = error { p.error role="alert" { (e) } }
                    p { button type="submit" { "Sign in" } }
                }
            }
        },
    )
}

/// The page of one object (`kind` and `id`, as title and heading) with
/// action forms: the confirmation of the action that led here, then `body`.
pub fn object_page(kind: &str, id: &str, nav: Nav, forms: &Forms, body: Markup) -> Markup {
    page(
        &format!("{kind} {id}"),
        nav,
        None,
        html! {
            (done(forms))
            h2 { (kind) " " code { (id) } }
            (body)
        },
    )
}

/// A page that says why a request was not answered as asked: a 404, a
/// refused form, an invalid input.
pub fn failed(title: &str, detail: &str) -> Markup {
    page(
        title,
        Nav::None,
        None,
        html! {
            h2 #problem { (title) }
            p.error role="alert" { (detail) }
            p { a href="/dashboard" { "Back to the overview" } }
        },
    )
}

/// `base` + `/` + `id` with every byte outside `[A-Za-z0-9_.~-]` of the
/// id percent-encoded: a link to one object, whatever its id holds.
pub fn href(base: &str, id: &str) -> String {
    let mut out = format!("{base}/");
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"_.~-".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `path` with these query pairs, encoded.
pub fn with_query(path: &str, pairs: &[(&str, &str)]) -> String {
    let query = serde_urlencoded::to_string(pairs).unwrap_or_default();
    format!("{path}?{query}")
}

/// A link to the search page with these filters.
pub fn search_href(pairs: &[(&str, &str)]) -> String {
    with_query("/dashboard/search", pairs)
}

/// The hidden field that carries a form's CSRF token.
pub fn csrf_field(token: &str) -> Markup {
    html! { input type="hidden" name=(csrf::FIELD) value=(token); }
}

/// What a page with action forms carries: the session's CSRF token, and
/// the confirmation the last action's redirect asked for
/// (`?done=…&replayed=…`, `?done=expired&expired=…`, `?done=tested&test=…`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Forms {
    #[serde(skip)]
    pub csrf: String,
    pub done: Option<String>,
    pub replayed: Option<u64>,
    /// How many previous secrets stopped signing.
    pub expired: Option<u64>,
    /// The test delivery just sent (shown only when it is the endpoint's).
    pub test: Option<String>,
}

/// The confirmation `?done=` asks for, from a fixed list: nothing from the
/// query is echoed.
pub fn done(forms: &Forms) -> Markup {
    let text = match forms.done.as_deref() {
        Some("replayed") => "Replay queued: a manual attempt goes out now.".to_string(),
        Some("skipped") => {
            "Skipped: the subject's next delivery goes now; the skipped one stays dead.".to_string()
        }
        Some("enabled") => "Endpoint enabled.".to_string(),
        Some("disabled") => "Endpoint disabled: its waiting deliveries are paused.".to_string(),
        Some("recovered") => format!(
            "Recovery queued: {} failed or dead deliveries will be sent again.",
            forms.replayed.unwrap_or(0)
        ),
        Some("expired") => format!(
            "Previous secrets expired: {} stopped signing; only the newest signs now.",
            forms.expired.unwrap_or(0)
        ),
        Some("tested") => "Test event sent: a webhook.test delivery to this endpoint only \
             (its result is below)."
            .to_string(),
        _ => return html! {},
    };
    html! { p.done #done role="status" { (text) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confirmation_is_chosen_from_a_fixed_list() {
        let asked = |done: &str, replayed| Forms {
            done: Some(done.into()),
            replayed,
            ..Forms::default()
        };
        assert!(
            done(&asked("replayed", None))
                .into_string()
                .contains("Replay queued")
        );
        assert!(
            done(&asked("recovered", Some(3)))
                .into_string()
                .contains("3 failed or dead")
        );
        assert_eq!(done(&asked("<script>", None)).into_string(), "");
        assert_eq!(done(&Forms::default()).into_string(), "");
    }

    #[test]
    fn links_encode_what_an_id_holds() {
        assert_eq!(
            href("/dashboard/endpoints", "ep_01ABC"),
            "/dashboard/endpoints/ep_01ABC"
        );
        assert_eq!(href("/x", "a/../b?c=d"), "/x/a%2F..%2Fb%3Fc%3Dd");
        assert_eq!(
            search_href(&[("event_id", "evt_1&x=2")]),
            "/dashboard/search?event_id=evt_1%26x%3D2"
        );
    }

    #[test]
    fn the_current_section_is_marked_in_the_navigation() {
        let html = page("x", Nav::Search, None, html! {}).into_string();
        assert!(
            html.contains(r#"<a href="/dashboard/search" aria-current="page">Search</a>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<a href="/dashboard">Overview</a>"#),
            "{html}"
        );
    }

    #[test]
    fn every_page_links_the_documentation() {
        let html = page("x", Nav::Overview, None, html! {}).into_string();
        assert!(html.contains(r#"<a href="/docs">Docs</a>"#), "{html}");
    }
}
