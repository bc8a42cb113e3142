//! `/v1/endpoints`: create, list, read, change, delete, enable and disable
//! endpoints; rotate their secrets; send a test event; recover a time range.

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};

pub(crate) use super::endpoint_ops::{change_status, check_text, checked_url, recover_range};
use super::{endpoint_ops as ops, time};
use crate::{
    delivery::messages::EndpointChanged,
    http::{
        AppState, auth, body,
        page::Page,
        problem::{Errors, Problem},
    },
    store::{endpoints::EndpointStatus, scoped::for_partner},
};
use ops::not_found;

pub use super::endpoint_shapes::*;

/// Create an endpoint; its secret is in the answer, and only there.
#[utoipa::path(tag = "endpoints", request_body = CreateEndpoint, security(("partner_key" = [])),
    responses((status = 201, description = "Created: the endpoint, and its signing secret (shown this once)", body = EndpointCreated), Errors))]
#[post("/v1/endpoints")]
pub async fn create_endpoint(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let input: CreateEndpoint = state.read_json(&req, payload).await?;
    let (endpoint, secret) = ops::create(&state, &partner, input).await?;
    Ok(HttpResponse::Created().json(EndpointCreated {
        endpoint: endpoint.into(),
        key: KeyShown::of(&secret),
    }))
}

/// List endpoints, oldest first.
#[utoipa::path(tag = "endpoints", params(ListQuery), security(("partner_key" = [])),
    responses((status = 200, description = "A page of endpoints, oldest first; `next_cursor` continues it", body = Page<EndpointOut>), Errors))]
#[get("/v1/endpoints")]
pub async fn list_endpoints(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: ListQuery = body::query(req.query_string())?;
    let (limit, after) = q.page(&state.shared.config.api)?;
    let rows = for_partner(&state.shared.db, &partner)
        .endpoints(after.as_ref(), limit)
        .await?;
    Ok(HttpResponse::Ok().json(Page::of(
        rows,
        limit,
        |e| (e.created_at, e.id.as_str()),
        EndpointOut::from,
    )))
}

/// Read one endpoint.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The endpoint", body = EndpointOut), Errors))]
#[get("/v1/endpoints/{id}")]
pub async fn get_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let e = for_partner(&state.shared.db, &partner)
        .endpoint(&id)
        .await?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Ok().json(EndpointOut::from(e)))
}

/// Change an endpoint's URL, description, types, schema version, concurrency or rate limit.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = UpdateEndpoint, security(("partner_key" = [])),
    responses((status = 200, description = "The endpoint as changed", body = EndpointOut), Errors))]
#[patch("/v1/endpoints/{id}")]
pub async fn update_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    // Refused before the body is read: a notification endpoint is not changed here.
    ops::changeable(&state, &partner, &id).await?;
    let input: UpdateEndpoint = state.read_json(&req, payload).await?;
    let e = ops::update(&state, &partner, &id, input).await?;
    Ok(HttpResponse::Ok().json(EndpointOut::from(e)))
}

/// Delete an endpoint with its deliveries and attempts.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 204, description = "Deleted"), Errors))]
#[delete("/v1/endpoints/{id}")]
pub async fn delete_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    if !ops::changeable(&state, &partner, &id)
        .await?
        .delete_endpoint(&id)
        .await?
    {
        return Err(not_found());
    }
    state
        .engine
        .fanout
        .do_send(EndpointChanged(id.into_inner()));
    Ok(HttpResponse::NoContent().finish())
}

async fn set_status(
    req: HttpRequest,
    id: &str,
    state: &AppState,
    status: EndpointStatus,
    reason: Option<&str>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, state).await?;
    let (e, _) = change_status(state, &partner, id, status, reason).await?;
    Ok(HttpResponse::Ok().json(EndpointOut::from(e)))
}

/// Enable an endpoint: its paused deliveries from within the replay window are due at once.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The endpoint, enabled", body = EndpointOut), Errors))]
#[post("/v1/endpoints/{id}/enable")]
pub async fn enable_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    set_status(req, &id, &state, EndpointStatus::Active, None).await
}

/// Disable an endpoint: nothing is sent to it until it is enabled; what it holds is `paused`.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The endpoint, disabled", body = EndpointOut), Errors))]
#[post("/v1/endpoints/{id}/disable")]
pub async fn disable_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    set_status(
        req,
        &id,
        &state,
        EndpointStatus::Disabled,
        Some("disabled by the partner"),
    )
    .await
}

/// Rotate the signing secret; the previous one keeps signing during the overlap.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = RotateSecret, security(("partner_key" = [])),
    responses((status = 200, description = "The new secret (shown this once), and when the previous one stops signing", body = SecretRotated), Errors))]
#[post("/v1/endpoints/{id}/secret/rotate")]
pub async fn rotate_secret(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    for_partner(&state.shared.db, &partner)
        .endpoint(&id)
        .await?
        .ok_or_else(not_found)?;
    let input: RotateSecret = state.read_json(&req, payload).await?;
    let (secret, until) = ops::rotate(&state, &partner, &id, &input).await?;
    Ok(HttpResponse::Ok().json(SecretRotated {
        key: KeyShown::of(&secret),
        previous_expires_at: time(until),
    }))
}

/// End the rotation overlap now: only the newest secret signs.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "How many previous secrets stopped signing", body = PreviousExpired), Errors))]
#[post("/v1/endpoints/{id}/secret/expire-previous")]
pub async fn expire_previous(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let expired = ops::expire_previous(&state, &partner, &id).await?;
    Ok(HttpResponse::Ok().json(PreviousExpired { expired }))
}

/// Send a `webhook.test` event to this endpoint only.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 202, description = "Queued: the test event and its delivery to this endpoint", body = TestSent), Errors))]
#[post("/v1/endpoints/{id}/test")]
pub async fn send_test(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let (event_id, delivery_id) = ops::send_test(&state, &partner, &id).await?;
    Ok(HttpResponse::Accepted().json(TestSent {
        event_id,
        delivery_id,
    }))
}

/// Replay every failed or dead delivery of this endpoint created in a time range.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = Recover, security(("partner_key" = [])),
    responses((status = 202, description = "Queued: how many failed or dead deliveries get a manual attempt", body = Recovered), Errors))]
#[post("/v1/endpoints/{id}/recover")]
pub async fn recover(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    for_partner(&state.shared.db, &partner)
        .endpoint(&id)
        .await?
        .ok_or_else(not_found)?;
    let input: Recover = state.read_json(&req, payload).await?;
    let (_, _, replayed) = recover_range(&state, &partner, &id, &input).await?;
    Ok(HttpResponse::Accepted().json(Recovered { replayed }))
}
