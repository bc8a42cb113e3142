//! `/v1/endpoints/{id}/auth`: the credentials an endpoint presents to its
//! receiver (static headers, OAuth2 client credentials, a client
//! certificate) and the `v1a` public keys it signs with. Secrets go in and
//! never come out.

use actix_web::{HttpRequest, HttpResponse, delete, get, put, web};

use super::{auth_ops, auth_shapes::*, endpoint_ops as ops};
use crate::{
    http::{
        AppState, auth,
        problem::{Errors, Problem},
    },
    store::receiver_auth::Change,
};

/// What the endpoint presents to its receiver, every secret redacted.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The endpoint's receiver credentials, redacted, and its public keys", body = ReceiverAuthOut), Errors))]
#[get("/v1/endpoints/{id}/auth")]
pub async fn get_receiver_auth(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let shown = auth_ops::shown(&state, &partner, &id).await?;
    Ok(HttpResponse::Ok().json(shown))
}

/// Set the static headers sent with every delivery (replacing any).
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = SetHeaders, security(("partner_key" = [])),
    responses((status = 200, description = "The credentials as now set, redacted", body = ReceiverAuthOut), Errors))]
#[put("/v1/endpoints/{id}/auth/headers")]
pub async fn set_headers(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    ops::changeable(&state, &partner, &id).await?;
    let input: SetHeaders = state.read_json(&req, payload).await?;
    let given: Vec<(String, String)> = input.headers.into_iter().collect();
    let headers = auth_ops::checked_headers(&given)?;
    change(&state, &partner, &id, Change::Headers(Some(&headers))).await
}

/// Set OAuth2 client credentials: deliveries carry a bearer token from `token_url`.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = SetOAuth2, security(("partner_key" = [])),
    responses((status = 200, description = "The credentials as now set, redacted", body = ReceiverAuthOut), Errors))]
#[put("/v1/endpoints/{id}/auth/oauth2")]
pub async fn set_oauth2(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    ops::changeable(&state, &partner, &id).await?;
    let input: SetOAuth2 = state.read_json(&req, payload).await?;
    let token_url = auth_ops::checked_token_url(&state, &input.token_url).await?;
    let client = auth_ops::oauth2_client(token_url, input)?;
    change(&state, &partner, &id, Change::OAuth2(Some(&client))).await
}

/// Set the client certificate presented to receivers that require mutual TLS.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = SetClientCertificate, security(("partner_key" = [])),
    responses((status = 200, description = "The credentials as now set, redacted", body = ReceiverAuthOut), Errors))]
#[put("/v1/endpoints/{id}/auth/client-certificate")]
pub async fn set_client_certificate(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    ops::changeable(&state, &partner, &id).await?;
    let timeout = state.shared.config.http.body_timeout;
    let pem = ["certificate", "private_key"];
    let input: SetClientCertificate =
        crate::http::body::read_json_multiline(&req, payload, timeout, &pem).await?;
    let now = state.shared.clock.now_ms();
    let trust = &state.shared.trust;
    let cert = auth_ops::checked_certificate(trust, input.certificate, input.private_key, now)?;
    change(&state, &partner, &id, cert.change()).await
}

/// Stop sending one kind of credential: `headers`, `oauth2` or
/// `client-certificate`.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path), ("part" = inline(AuthPart), Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The credentials as now set, redacted", body = ReceiverAuthOut), Errors))]
#[delete("/v1/endpoints/{id}/auth/{part}")]
pub async fn remove_receiver_auth(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, part) = path.into_inner();
    let partner = auth::partner(&req, &state).await?;
    // Read here, not by the extractor: an unknown part is a 404 like any
    // unknown route, answered as problem+json.
    let part = AuthPart::parse(&part).ok_or_else(ops::not_found)?;
    ops::changeable(&state, &partner, &id).await?;
    change(&state, &partner, &id, auth_ops::removal(part)).await
}

async fn change(
    state: &AppState,
    partner: &str,
    id: &str,
    change: Change<'_>,
) -> Result<HttpResponse, Problem> {
    let shown = auth_ops::change(state, partner, id, change).await?;
    Ok(HttpResponse::Ok().json(shown))
}
