//! The OpenAPI 3.1 document, generated from the handlers that serve the
//! routes (so the document and the routes cannot drift apart). The error
//! answers every route documents are `problem::Errors`.

use actix_web::get;
use utoipa::{
    Modify, OpenApi,
    openapi::{
        RefOr,
        response::Response,
        security::{Http, HttpAuthScheme, SecurityScheme},
        server::Server,
    },
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "hookd",
        description = "Webhook delivery: produce events, manage endpoints and secrets, search deliveries, replay, recover and read the event feed. Every error is application/problem+json: 400 when hookd cannot read the request (the body is not one JSON value, a key is given twice), 422 when a value breaks a rule (unknown field or query parameter, wrong type, out of range, bad cursor), with `field` naming it.",
    ),
    components(schemas(super::problem::Problem, super::problem::ProblemError)),
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

/// The base document the routes are added to. Its one server is `/`: a
/// relative URL, which OpenAPI resolves against wherever the document was
/// fetched from, so the same document is right behind any proxy or host
/// name, and in tests on a random port (see docs/partner-api.md).
pub fn base() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    let mut server = Server::new("/");
    server.description = Some("this hookd: the host that served this document".into());
    doc.servers = Some(vec![server]);
    doc
}

/// The whole document: the base, every route's operation, and the links
/// between them. Built from the same `routes` the server mounts.
pub fn generate() -> utoipa::openapi::OpenApi {
    use utoipa_actix_web::AppExt as _;
    let (_, mut doc) = actix_web::App::new()
        .into_utoipa_app()
        .openapi(base())
        // A closure, so that `routes` is taken for any lifetime of the config.
        .configure(|c| super::routes(c))
        .split_for_parts();
    super::links::add(&mut doc);
    describe_the_undescribed(&mut doc);
    doc
}

/// OpenAPI requires a description on every response. A route that gives
/// none gets its status's reason phrase ("OK"), so the document stays valid
/// whatever a new route forgets; `undescribed` finds them for the test.
fn describe_the_undescribed(doc: &mut utoipa::openapi::OpenApi) {
    for (status, response) in responses_mut(doc) {
        if response.description.trim().is_empty() {
            response.description = actix_web::http::StatusCode::from_bytes(status.as_bytes())
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("The answer")
                .to_string();
        }
    }
}

/// Every inline response of every operation, with its status.
fn responses_mut(doc: &mut utoipa::openapi::OpenApi) -> Vec<(String, &mut Response)> {
    doc.paths
        .paths
        .values_mut()
        .flat_map(|item| {
            [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
                &mut item.head,
                &mut item.options,
            ]
            .into_iter()
            .flatten()
        })
        .flat_map(|op| op.responses.responses.iter_mut())
        .filter_map(|(status, response)| match response {
            RefOr::T(response) => Some((status.clone(), response)),
            RefOr::Ref(_) => None,
        })
        .collect()
}

/// The whole document as the JSON it is served as, written once when the
/// server starts. Kept as text, not as utoipa's tree: the tree of every
/// route's operation and schema takes a few MiB, its JSON about 220 KiB.
#[derive(Clone)]
pub struct Rendered(actix_web::web::Bytes);

impl Rendered {
    pub fn new() -> Rendered {
        let json = serde_json::to_vec(&generate()).expect("the OpenAPI document serialises");
        Rendered(json.into())
    }
}

impl Default for Rendered {
    fn default() -> Self {
        Self::new()
    }
}

/// This document.
#[utoipa::path(tag = "health", responses((status = 200, description = "The OpenAPI 3.1 document", body = Object)))]
#[get("/v1/openapi.json")]
pub async fn document(doc: actix_web::web::Data<Rendered>) -> actix_web::HttpResponse {
    actix_web::HttpResponse::Ok()
        .content_type(actix_web::http::header::ContentType::json())
        .body(doc.0.clone())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn every_response_has_a_description_and_there_is_a_server() {
        let mut doc = generate();
        let bare: Vec<String> = responses_mut(&mut doc)
            .into_iter()
            .filter(|(_, r)| r.description.trim().is_empty())
            .map(|(status, _)| status)
            .collect();
        assert!(bare.is_empty(), "responses without a description: {bare:?}");
        let servers = doc.servers.as_deref().unwrap_or_default();
        assert_eq!(
            servers.iter().map(|s| s.url.as_str()).collect::<Vec<_>>(),
            ["/"]
        );
    }

    #[test]
    fn ingest_documents_the_trace_context_headers_and_field() {
        let doc = serde_json::to_value(generate()).expect("the document serialises");
        let post = &doc["paths"]["/v1/events"]["post"];
        let headers: Vec<&str> = post["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "header")
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert_eq!(headers, ["traceparent", "tracestate"]);
        let body = post["requestBody"]["description"].as_str().unwrap_or("");
        assert!(body.contains("`traceparent`"), "{body}");
    }

    #[test]
    fn a_response_without_a_description_gets_its_reason_phrase() {
        let mut doc = base();
        let op = utoipa::openapi::path::OperationBuilder::new()
            .response("202", Response::new(""))
            .response("299", Response::new(""))
            .response("200", Response::new("kept"))
            .build();
        doc.paths.paths.insert(
            "/x".into(),
            utoipa::openapi::path::PathItem::new(utoipa::openapi::HttpMethod::Get, op),
        );
        describe_the_undescribed(&mut doc);
        let described: BTreeMap<String, String> = responses_mut(&mut doc)
            .into_iter()
            .map(|(status, r)| (status, r.description.clone()))
            .collect();
        assert_eq!(described["202"], "Accepted");
        assert_eq!(described["200"], "kept");
        assert!(!described["299"].is_empty());
    }
}
