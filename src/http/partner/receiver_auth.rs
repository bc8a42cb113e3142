//! `/v1/endpoints/{id}/auth`: the credentials an endpoint presents to its
//! receiver (static headers, OAuth2 client credentials, a client
//! certificate) and the `v1a` public keys it signs with. Secrets go in and
//! never come out.

use actix_web::{HttpRequest, HttpResponse, delete, get, put, web};

use super::{auth_shapes::*, endpoint_ops as ops};
use crate::{
    delivery::messages::EndpointChanged,
    domain::{client_cert, receiver_auth::check_headers},
    http::{
        AppState, auth,
        problem::{Errors, Problem},
    },
    store::{
        endpoints::public_keys,
        receiver_auth::{Change, OAuth2Client},
        scoped::for_partner,
    },
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
    let shown = for_partner(&state.shared.db, &partner)
        .receiver_auth(&id)
        .await?
        .ok_or_else(ops::not_found)?;
    answer(&state, &id, shown).await
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
    let headers = check_headers(&given).map_err(|e| Problem::invalid("headers", e.to_string()))?;
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
    let token_url = ops::checked_url(&state, &input.token_url)
        .await
        .map_err(|p| p.with_field("token_url"))?;
    for (field, value, max) in [
        ("client_id", Some(&input.client_id), 256),
        ("client_secret", Some(&input.client_secret), 1024),
        ("scope", input.scope.as_ref(), 1024),
        ("audience", input.audience.as_ref(), 1024),
    ] {
        if let Some(v) = value {
            one_line(field, v, max)?;
        }
    }
    let client = OAuth2Client {
        token_url,
        client_id: input.client_id,
        client_secret: input.client_secret,
        scope: input.scope,
        audience: input.audience,
    };
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
    let cert = client_cert::read(&input.certificate, &input.private_key, now)
        .map_err(|e| Problem::invalid("certificate", e.to_string()))?;
    let summary = cert.summary.clone();
    // The key must match the certificate and be one rustls can sign with.
    state
        .shared
        .trust
        .with_client_cert(cert.chain, cert.key)
        .map_err(|e| {
            Problem::invalid(
                "private_key",
                format!("the key cannot be used with the certificate: {e}"),
            )
        })?;
    let set = (
        input.certificate.as_str(),
        input.private_key.as_str(),
        summary.subject.as_str(),
        summary.not_after_ms,
    );
    change(&state, &partner, &id, Change::ClientCert(Some(set))).await
}

/// Stop sending one kind of credential: `headers`, `oauth2` or
/// `client-certificate`.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path), ("part" = inline(AuthPart), Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The credentials as now set, redacted", body = ReceiverAuthOut), Errors))]
#[delete("/v1/endpoints/{id}/auth/{part}")]
pub async fn remove_receiver_auth(
    req: HttpRequest,
    path: web::Path<(String, AuthPart)>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, part) = path.into_inner();
    let partner = auth::partner(&req, &state).await?;
    ops::changeable(&state, &partner, &id).await?;
    let removal = match part {
        AuthPart::Headers => Change::Headers(None),
        AuthPart::Oauth2 => Change::OAuth2(None),
        AuthPart::ClientCertificate => Change::ClientCert(None),
    };
    change(&state, &partner, &id, removal).await
}

/// Text on one line, of at most `max` bytes.
fn one_line(field: &str, value: &str, max: usize) -> Result<(), Problem> {
    if value.trim().is_empty() || value.len() > max || value.chars().any(char::is_control) {
        return Err(Problem::invalid(
            field,
            format!("{field} must be 1 to {max} bytes on one line"),
        ));
    }
    Ok(())
}

async fn change(
    state: &AppState,
    partner: &str,
    id: &str,
    change: Change<'_>,
) -> Result<HttpResponse, Problem> {
    let now = state.shared.clock.now_ms();
    let shown = for_partner(&state.shared.db, partner)
        .change_receiver_auth(&state.shared.secrets, id, change, now)
        .await?
        .ok_or_else(ops::not_found)?;
    state.engine.fanout.do_send(EndpointChanged(id.to_string()));
    answer(state, id, shown).await
}

async fn answer(
    state: &AppState,
    id: &str,
    shown: crate::store::receiver_auth::Shown,
) -> Result<HttpResponse, Problem> {
    let keys = public_keys(&state.shared.db, id, state.shared.clock.now_ms()).await?;
    Ok(HttpResponse::Ok().json(ReceiverAuthOut::new(shown, keys)))
}
