//! The OpenAPI 3.1 document, generated from the handlers that serve the
//! routes (so the document and the routes cannot drift apart).

use actix_web::get;
use utoipa::{
    Modify, OpenApi,
    openapi::security::{Http, HttpAuthScheme, SecurityScheme},
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "hookd",
        description = "Webhook delivery: produce events, manage endpoints and secrets, search deliveries, replay, recover and read the event feed. Every error is application/problem+json.",
    ),
    components(schemas(super::problem::Problem, crate::catalog::DataError)),
    modifiers(&Keys),
    tags(
        (name = "ingest", description = "Producing events (service key)"),
        (name = "endpoints", description = "Endpoints and secrets (partner key)"),
        (name = "deliveries", description = "Delivery history and replay (partner key)"),
        (name = "events", description = "The event feed (partner key)"),
        (name = "catalog", description = "Event types and limits (partner key)"),
        (name = "partner", description = "Your partner record and notification channel (partner key)"),
        (name = "admin", description = "Partners, keys, every partner's deliveries, events and endpoints, operator actions and their audit log (operator key)"),
        (name = "health", description = "Liveness and readiness"),
    )
)]
pub struct ApiDoc;

struct Keys;

impl Modify for Keys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for name in ["service_key", "partner_key", "operator_key"] {
            components.add_security_scheme(
                name,
                SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
            );
        }
    }
}

/// The base document the routes are added to.
pub fn base() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}

/// The whole document: the base, every route's operation, and the links
/// between them. Built from the same `routes` the server mounts.
pub fn generate() -> utoipa::openapi::OpenApi {
    use utoipa_actix_web::AppExt as _;
    let (_, mut doc) = actix_web::App::new()
        .into_utoipa_app()
        .openapi(base())
        .configure(super::routes)
        .split_for_parts();
    super::links::add(&mut doc);
    doc
}

/// This document.
#[utoipa::path(tag = "health", responses((status = 200, description = "The OpenAPI 3.1 document", body = Object)))]
#[get("/v1/openapi.json")]
pub async fn document(
    doc: actix_web::web::Data<utoipa::openapi::OpenApi>,
) -> actix_web::HttpResponse {
    actix_web::HttpResponse::Ok().json(doc.get_ref())
}
