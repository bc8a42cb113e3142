//! `/v1/endpoints`: create, list, read, change, delete, enable and disable
//! endpoints; rotate their secrets; send a test event; recover a time range.

use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};

use super::time;
use crate::{
    delivery::fanout::EndpointChanged,
    domain::{
        event::{NewEvent, Subject, valid_event_type},
        ids::EventId,
    },
    egress::url_check::{RegistrationError, check_registration},
    http::{
        AppState, auth, body,
        page::{self, Page},
        problem::{Errors, Problem},
    },
    store::{
        endpoint_status::StatusEffects,
        endpoints::{Endpoint, EndpointStatus, NewEndpoint},
        scoped::{EndpointPatch, for_partner},
    },
};

pub use super::endpoint_shapes::*;

fn not_found() -> Problem {
    Problem::not_found("no such endpoint")
}

fn check_types(types: &[String]) -> Result<(), Problem> {
    if types.len() > 100 {
        return Err(Problem::out_of_range(
            "event_types",
            "at most 100 event types",
        ));
    }
    for (i, t) in types.iter().enumerate() {
        let probe = t
            .strip_suffix(".*")
            .map(|p| format!("{p}.x"))
            .unwrap_or_else(|| t.clone());
        if !valid_event_type(&probe) {
            return Err(Problem::invalid(
                format!("event_types[{i}]"),
                format!("`{t}` is not an event type like usage.finalized or usage.*"),
            ));
        }
    }
    Ok(())
}

pub(crate) fn check_text(field: &str, value: &str, max: usize) -> Result<(), Problem> {
    if value.chars().count() > max || value.chars().any(|c| c.is_control() && c != '\n') {
        return Err(Problem::out_of_range(
            field,
            format!("{field} must be at most {max} characters without control characters"),
        ));
    }
    Ok(())
}

fn check_range(
    field: &str,
    value: Option<u32>,
    range: std::ops::RangeInclusive<u32>,
) -> Result<(), Problem> {
    match value {
        Some(v) if !range.contains(&v) => Err(Problem::out_of_range(
            field,
            format!(
                "{field} must be between {} and {}",
                range.start(),
                range.end()
            ),
        )),
        _ => Ok(()),
    }
}

pub(crate) async fn checked_url(state: &AppState, url: &str) -> Result<String, Problem> {
    match check_registration(url, &state.shared.rules, &state.engine.resolver).await {
        Ok(u) => Ok(u.url.to_string()),
        Err(RegistrationError::Resolver(e)) => Err(Problem::internal(&e)),
        Err(e) => Err(Problem::invalid_url("url", e.to_string())),
    }
}

/// A notification endpoint is changed and removed with `PATCH /v1/partner`.
fn managed_here(e: &crate::store::endpoints::Endpoint) -> Result<(), Problem> {
    if e.kind == crate::store::endpoints::Kind::Endpoint {
        return Ok(());
    }
    Err(Problem::conflict(
        "this is your notification URL: change or remove it with PATCH /v1/partner (notification_url)",
    ))
}

/// Create an endpoint; its secret is in the answer, and only there.
#[utoipa::path(tag = "endpoints", request_body = CreateEndpoint, security(("partner_key" = [])),
    responses((status = 201, body = EndpointCreated), Errors))]
#[post("/v1/endpoints")]
pub async fn create_endpoint(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let input: CreateEndpoint = state.read_json(&req, payload).await?;
    let types = input.event_types.unwrap_or_default();
    check_types(&types)?;
    let description = input.description.unwrap_or_default();
    check_text("description", &description, 1000)?;
    if let Some(v) = &input.schema_version {
        check_text("schema_version", v, 32)?;
    }
    check_range("concurrency", input.concurrency, 1..=256)?;
    check_range("rate_limit", input.rate_limit, 1..=10_000)?;
    let url = checked_url(&state, &input.url).await?;
    let new = NewEndpoint {
        partner_id: partner.clone(),
        url,
        description,
        event_types: types,
        schema_version: input.schema_version,
        schema_versions: match &input.schema_versions {
            Some(given) => super::pins::parse(given, &state.shared.catalog)?,
            None => Default::default(),
        },
        concurrency: input
            .concurrency
            .unwrap_or(state.shared.config.delivery.default_concurrency),
        rate_limit: input.rate_limit,
        status: match input.status {
            Some(InitialStatus::Paused) => EndpointStatus::Paused,
            _ => EndpointStatus::Active,
        },
    };
    let (endpoint, secret) = crate::store::endpoints::create(
        &state.shared.db,
        &state.shared.secrets,
        new,
        state.shared.clock.now_ms(),
    )
    .await?;
    Ok(HttpResponse::Created().json(EndpointCreated {
        endpoint: endpoint.into(),
        secret: secret.expose(),
    }))
}

/// List endpoints, oldest first.
#[utoipa::path(tag = "endpoints", params(ListQuery), security(("partner_key" = [])),
    responses((status = 200, body = Page<EndpointOut>), Errors))]
#[get("/v1/endpoints")]
pub async fn list_endpoints(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: ListQuery = body::query(req.query_string())?;
    let api = &state.shared.config.api;
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    let after = q.after.as_deref().map(page::decode_position).transpose()?;
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
    responses((status = 200, body = EndpointOut), Errors))]
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
    responses((status = 200, body = EndpointOut), Errors))]
#[patch("/v1/endpoints/{id}")]
pub async fn update_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let scoped = for_partner(&state.shared.db, &partner);
    managed_here(&scoped.endpoint(&id).await?.ok_or_else(not_found)?)?;
    let input: UpdateEndpoint = state.read_json(&req, payload).await?;
    if let Some(t) = &input.event_types {
        check_types(t)?;
    }
    if let Some(d) = &input.description {
        check_text("description", d, 1000)?;
    }
    if let Some(v) = &input.schema_version {
        check_text("schema_version", v, 32)?;
    }
    check_range("concurrency", input.concurrency, 1..=256)?;
    check_range("rate_limit", input.rate_limit, 1..=10_000)?;
    let url = match &input.url {
        Some(u) => Some(checked_url(&state, u).await?),
        None => None,
    };
    let patch = EndpointPatch {
        url,
        description: input.description,
        event_types: input.event_types,
        schema_version: input.schema_version.map(Some),
        schema_versions: match &input.schema_versions {
            Some(given) => Some(super::pins::parse(given, &state.shared.catalog)?),
            None => None,
        },
        concurrency: input.concurrency,
        rate_limit: input.rate_limit.map(Some),
    };
    let e = scoped
        .update_endpoint(&id, patch, state.shared.clock.now_ms())
        .await?
        .ok_or_else(not_found)?;
    state.engine.fanout.do_send(EndpointChanged(e.id.clone()));
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
    let scoped = for_partner(&state.shared.db, &partner);
    managed_here(&scoped.endpoint(&id).await?.ok_or_else(not_found)?)?;
    if !scoped.delete_endpoint(&id).await? {
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

/// Sets the status of one of `partner`'s endpoints and tells the fanout:
/// what the partner's enable and disable do, and the operator's.
pub(crate) async fn change_status(
    state: &AppState,
    partner: &str,
    id: &str,
    status: EndpointStatus,
    reason: Option<&str>,
) -> Result<(Endpoint, StatusEffects), Problem> {
    let (e, effects) = for_partner(&state.shared.db, partner)
        .set_status(
            id,
            status,
            reason,
            state.shared.clock.now_ms(),
            state.shared.config.api.replay_window_ms(),
        )
        .await?
        .ok_or_else(not_found)?;
    state.engine.fanout.do_send(EndpointChanged(e.id.clone()));
    Ok((e, effects))
}

/// Enable an endpoint: its paused deliveries from within the replay window are due at once.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, body = EndpointOut), Errors))]
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
    responses((status = 200, body = EndpointOut), Errors))]
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
    responses((status = 200, body = SecretRotated), Errors))]
#[post("/v1/endpoints/{id}/secret/rotate")]
pub async fn rotate_secret(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let scoped = for_partner(&state.shared.db, &partner);
    scoped.endpoint(&id).await?.ok_or_else(not_found)?;
    let input: RotateSecret = state.read_json(&req, payload).await?;
    let max = state.shared.config.api.max_secret_overlap.as_secs();
    let overlap = input.overlap_seconds.unwrap_or(86_400);
    if overlap > max {
        return Err(Problem::out_of_range(
            "overlap_seconds",
            format!("overlap_seconds must be between 0 and {max}"),
        ));
    }
    let now = state.shared.clock.now_ms();
    let (secret, until) = scoped
        .rotate_secret(&state.shared.secrets, &id, overlap as i64 * 1000, now)
        .await?
        .ok_or_else(not_found)?;
    state
        .engine
        .fanout
        .do_send(EndpointChanged(id.into_inner()));
    Ok(HttpResponse::Ok().json(SecretRotated {
        secret: secret.expose(),
        previous_expires_at: time(until),
    }))
}

/// End the rotation overlap now: only the newest secret signs.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, body = PreviousExpired), Errors))]
#[post("/v1/endpoints/{id}/secret/expire-previous")]
pub async fn expire_previous(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let expired = for_partner(&state.shared.db, &partner)
        .expire_previous_secrets(&id, state.shared.clock.now_ms())
        .await?
        .ok_or_else(not_found)?;
    state
        .engine
        .fanout
        .do_send(EndpointChanged(id.into_inner()));
    Ok(HttpResponse::Ok().json(PreviousExpired { expired }))
}

/// Send a `webhook.test` event to this endpoint only.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 202, body = TestSent), Errors))]
#[post("/v1/endpoints/{id}/test")]
pub async fn send_test(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let now = state.shared.clock.now_ms();
    let event = NewEvent {
        id: EventId::generate(),
        event_type: "webhook.test".into(),
        partner_id: partner.clone(),
        subject: Some(Subject {
            subject_type: "endpoint".into(),
            id: id.to_string(),
            version: None,
        }),
        occurred_at_ms: now,
        occurred_at_given: true,
        schema_version: 1,
        payload:
            serde_json::json!({"endpoint_id": id.as_str(), "message": "a test event from hookd"})
                .to_string(),
        correlation_id: None,
        renditions: Default::default(),
    };
    let delivery_id = for_partner(&state.shared.db, &partner)
        .send_test(&id, &event, now)
        .await?
        .ok_or_else(not_found)?;
    state
        .engine
        .fanout
        .do_send(EndpointChanged(id.into_inner()));
    Ok(HttpResponse::Accepted().json(TestSent {
        event_id: event.id.to_string(),
        delivery_id,
    }))
}

/// Replay every failed or dead delivery of this endpoint created in a time range.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), request_body = Recover, security(("partner_key" = [])),
    responses((status = 202, body = Recovered), Errors))]
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

/// Queues a manual attempt of every failed or dead delivery of one of
/// `partner`'s endpoints in the range `input` asks for, which must lie
/// within the replay window, and tells the fanout: what the partner's
/// recover does, and the operator's. Returns (since, until, how many).
pub(crate) async fn recover_range(
    state: &AppState,
    partner: &str,
    id: &str,
    input: &Recover,
) -> Result<(i64, i64, u64), Problem> {
    let now = state.shared.clock.now_ms();
    let since = body::time("since", &input.since)?;
    let until = input
        .until
        .as_deref()
        .map(|u| body::time("until", u))
        .transpose()?
        .unwrap_or(now);
    let window = state.shared.config.api.replay_window_ms();
    if since < now - window {
        return Err(Problem::out_of_range(
            "since",
            format!(
                "since must be within the replay window ({} days)",
                window / 86_400_000
            ),
        ));
    }
    if until <= since {
        return Err(Problem::out_of_range("until", "until must be after since"));
    }
    let replayed = for_partner(&state.shared.db, partner)
        .recover(id, since, until, now)
        .await?
        .ok_or_else(not_found)?;
    state.engine.fanout.do_send(EndpointChanged(id.to_string()));
    Ok((since, until, replayed))
}
