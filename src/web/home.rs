//! `GET /`: where a newcomer who opens hookd's address lands. It links the
//! dashboard, the portal, the API's description and health, the README's
//! sections and the documentation's pages, served by the instance at
//! `/readme` and `/docs/{page}`.

use actix_web::{HttpResponse, get, http::StatusCode, web};
use maud::{Markup, html};

use super::{
    chrome,
    docs::{self, Home, Page},
};

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d2329}\
a{color:#0b5cad}code,pre{background:#f2f4f6;border-radius:3px}pre{padding:.6rem;overflow:auto}code{padding:0 .2rem}\
table{border-collapse:collapse}td,th{border:1px solid #d6dadf;padding:.2rem .5rem;text-align:left}\
ul.links li{margin:.3rem 0}";

/// The page's links: (path, name, what it is).
const LINKS: [(&str, &str, &str); 6] = [
    (
        "/dashboard",
        "Dashboard",
        "for operators: health, backlog, endpoints, deliveries (an operator key signs in)",
    ),
    (
        "/portal",
        "Portal",
        "for partners: endpoints, secrets, deliveries, replays (a partner key or a one-time link)",
    ),
    (
        "/v1/openapi.json",
        "OpenAPI document",
        "the Partner, service and operator API",
    ),
    ("/healthz", "/healthz", "alive"),
    ("/readyz", "/readyz", "ready: the database answers"),
    (
        "/docs",
        "Documentation",
        "the delivery contract, the API, configuration and operations, as built into this binary",
    ),
];

#[get("/")]
pub async fn home() -> HttpResponse {
    let (_, sections) = docs::render(docs::README, Home::Top);
    let body = html! {
        h1 { "hookd " small { (env!("CARGO_PKG_VERSION")) } }
        p { "A webhook delivery engine: committed events to signed, retried, SSRF-safe HTTP deliveries." }
        ul.links {
            @for (path, name, what) in LINKS {
                li { a href=(path) { (name) } " — " (what) }
            }
        }
        h2 { "The README" }
        ul.links {
            @for s in &sections {
                li { a href={ "/readme#" (s.anchor) } { (s.title) } }
            }
        }
        (contents())
    };
    chrome::html(
        StatusCode::OK,
        chrome::document("hookd", "", STYLE, None, body),
    )
}

/// The list of the documentation's pages, each linked by its title.
fn contents() -> Markup {
    html! {
        h2 { "The documentation" }
        ul.links {
            @for page in docs::PAGES {
                li { a href={ "/docs/" (page.name) } { (page.title()) } }
            }
        }
    }
}

/// A document of the built-in documentation, under the way home.
fn document(title: &str, rendered: String) -> HttpResponse {
    let body = html! {
        p { a href="/" { "← hookd" } " · " a href="/docs" { "Documentation" } }
        (maud::PreEscaped(rendered))
    };
    chrome::html(
        StatusCode::OK,
        chrome::document(title, " · hookd", STYLE, None, body),
    )
}

#[get("/readme")]
pub async fn readme_page() -> HttpResponse {
    document("README", docs::render(docs::README, Home::Top).0)
}

/// The documentation's contents: every page of `docs/`.
#[get("/docs")]
pub async fn docs_index() -> HttpResponse {
    let body = html! {
        p { a href="/" { "← hookd" } }
        h1 { "hookd documentation" }
        p { "As built into this binary. The front page is the " a href="/readme" { "README" } "." }
        (contents())
    };
    chrome::html(
        StatusCode::OK,
        chrome::document("Documentation", " · hookd", STYLE, None, body),
    )
}

/// One page of `docs/` by name, or a 404 page.
#[get("/docs/{page}")]
pub async fn docs_page(name: web::Path<String>) -> HttpResponse {
    match Page::named(&name) {
        Some(page) => document(&page.title(), docs::render(page.markdown, Home::Docs).0),
        None => chrome::html(
            StatusCode::NOT_FOUND,
            chrome::document(
                "Not found",
                " · hookd",
                STYLE,
                None,
                html! { p { "No such page. " a href="/docs" { "The documentation" } " lists them all." } },
            ),
        ),
    }
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(home)
        .service(readme_page)
        .service(docs_index)
        .service(docs_page);
}
