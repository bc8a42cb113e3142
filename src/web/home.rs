//! `GET /`: where a newcomer who opens hookd's address lands. It links the
//! dashboard, the portal, the API's description and health, and the
//! README's sections, served by the instance at `/readme`.

use actix_web::{HttpResponse, get, http::StatusCode, web};
use maud::html;

use super::{chrome, readme};

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
        "/readme",
        "README",
        "the delivery contract, configuration and operations, as built into this binary",
    ),
];

#[get("/")]
pub async fn home() -> HttpResponse {
    let (_, sections) = readme::render(readme::README);
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
    };
    chrome::html(
        StatusCode::OK,
        chrome::document("hookd", "", STYLE, None, body),
    )
}

#[get("/readme")]
pub async fn readme_page() -> HttpResponse {
    let (rendered, _) = readme::render(readme::README);
    let body = html! {
        p { a href="/" { "← hookd" } }
        (maud::PreEscaped(rendered))
    };
    chrome::html(
        StatusCode::OK,
        chrome::document("README", " · hookd", STYLE, None, body),
    )
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(home).service(readme_page);
}
