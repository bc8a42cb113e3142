//! `/v1/admin/endpoints`: operators list and read every partner's
//! endpoints with what they hold, and recover, enable and disable them as
//! the partner would (each written to the audit log). Never a secret. An
//! operator key only.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use super::{
    AppState, admin_audit, auth, body,
    page::{self, Page},
    partner::{
        endpoints::{EndpointOut, Recover, Recovered, change_status, check_text, recover_range},
        time,
    },
    problem::{Errors, Problem},
};
use crate::store::{
    self,
    admin::{Backlog, EndpointSearch},
    audit::Action,
    endpoints::{Endpoint, EndpointStatus},
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EndpointsQuery {
    /// Only this partner's endpoints.
    pub partner_id: Option<String>,
    /// `active`, `paused` or `disabled`.
    pub status: Option<String>,
    /// `true`: only endpoints failing now; `false`: only those that are not.
    pub failing: Option<bool>,
    /// The `next_cursor` of the previous page.
    pub after: Option<String>,
    pub limit: Option<i64>,
}

/// What an endpoint holds.
#[derive(Debug, Serialize, ToSchema)]
pub struct BacklogOut {
    /// Deliveries pending, failed (waiting to retry) or in flight.
    pub waiting: i64,
    /// Deliveries held while the endpoint is not active.
    pub paused: i64,
}

/// Any partner's endpoint, with what it holds. Its secret is never shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminEndpointOut {
    pub partner_id: String,
    /// `endpoint` (the partner's own), `notification` (the partner's
    /// notification URL) or `operator` (the operator's).
    pub kind: String,
    #[serde(flatten)]
    pub endpoint: EndpointOut,
    pub backlog: BacklogOut,
}

impl AdminEndpointOut {
    /// The operator's view of an endpoint with its backlog.
    pub fn of(e: Endpoint, b: Backlog) -> AdminEndpointOut {
        AdminEndpointOut {
            partner_id: e.partner_id.clone(),
            kind: e.kind.as_str().to_string(),
            endpoint: e.into(),
            backlog: BacklogOut {
                waiting: b.waiting,
                paused: b.paused,
            },
        }
    }
}

/// The body of enable and disable, optional.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusChange {
    /// Why: the disabled reason the partner sees (default "disabled by the
    /// operator"); kept in the audit log either way.
    #[schema(max_length = 500, pattern = r"^[^\x00-\x09\x0B-\x1F\x7F-\x9F]*$")]
    pub reason: Option<String>,
}

fn not_found() -> Problem {
    Problem::not_found("no such endpoint")
}

/// Any partner's endpoint, or 404.
pub(crate) async fn find(state: &AppState, id: &str) -> Result<Endpoint, Problem> {
    store::admin::endpoint(&state.shared.db, id)
        .await?
        .ok_or_else(not_found)
}

/// The answer for one endpoint, with its backlog read now.
async fn shown(state: &AppState, e: Endpoint) -> Result<AdminEndpointOut, Problem> {
    let mut backlogs =
        store::admin::backlogs(&state.shared.db, std::slice::from_ref(&e.id)).await?;
    let b = backlogs.remove(&e.id).unwrap_or_default();
    Ok(AdminEndpointOut::of(e, b))
}

/// List every partner's endpoints, oldest first.
#[utoipa::path(tag = "admin", params(EndpointsQuery), security(("operator_key" = [])),
    responses((status = 200, description = "A page of every partner's endpoints, oldest first", body = Page<AdminEndpointOut>), Errors))]
#[get("/v1/admin/endpoints")]
pub async fn admin_list_endpoints(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: EndpointsQuery = body::query(req.query_string())?;
    let status = q
        .status
        .as_deref()
        .map(|s| {
            EndpointStatus::parse(s)
                .ok_or_else(|| Problem::not_one_of("status", s, &["active", "paused", "disabled"]))
        })
        .transpose()?;
    let api = &state.shared.config.api;
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    let after = q.after.as_deref().map(page::decode_position).transpose()?;
    let search = EndpointSearch {
        partner_id: q.partner_id,
        status,
        failing: q.failing,
    };
    let db = &state.shared.db;
    let rows = store::admin::endpoints(db, &search, after.as_ref(), limit).await?;
    let ids: Vec<String> = rows.iter().map(|e| e.id.clone()).collect();
    let mut backlogs = store::admin::backlogs(db, &ids).await?;
    Ok(HttpResponse::Ok().json(Page::of(
        rows,
        limit,
        |e| (e.created_at, e.id.as_str()),
        |e| {
            let b = backlogs.remove(&e.id).unwrap_or_default();
            AdminEndpointOut::of(e, b)
        },
    )))
}

/// Replay every failed or dead delivery of any partner's endpoint created
/// in a time range, with the partner's rules; written to the audit log.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), request_body = Recover, security(("operator_key" = [])),
    responses((status = 202, description = "Queued: how many failed or dead deliveries get a manual attempt", body = Recovered), Errors))]
#[post("/v1/admin/endpoints/{id}/recover")]
pub async fn admin_recover_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let actor = admin_audit::operator(&req, &state).await?;
    let e = find(&state, &id).await?;
    let input: Recover = state.read_json(&req, payload).await?;
    let replayed = recover_as(&state, &actor, &e, &input).await?;
    Ok(HttpResponse::Accepted().json(Recovered { replayed }))
}

/// Recovers a time range of any partner's endpoint `e` as its partner
/// would and writes `actor`'s audit entry: the API's action and the
/// dashboard's. Returns how many deliveries were queued.
pub(crate) async fn recover_as(
    state: &AppState,
    actor: &admin_audit::Actor,
    e: &Endpoint,
    input: &Recover,
) -> Result<u64, Problem> {
    let (since, until, replayed) = recover_range(state, &e.partner_id, &e.id, input).await?;
    let detail = json!({"since": time(since), "until": time(until), "replayed": replayed});
    actor
        .record(state, Action::EndpointRecover, &e.id, &e.partner_id, detail)
        .await?;
    Ok(replayed)
}

/// Enable or disable any partner's endpoint as its partner would, and
/// write the audit entry.
async fn set_status(
    req: HttpRequest,
    id: &str,
    payload: web::Payload,
    state: &AppState,
    status: EndpointStatus,
) -> Result<HttpResponse, Problem> {
    let actor = admin_audit::operator(&req, state).await?;
    let before = find(state, id).await?;
    let input: StatusChange = state.read_json(&req, payload).await?;
    let e = set_status_as(state, &actor, before, status, input.reason.as_deref()).await?;
    Ok(HttpResponse::Ok().json(shown(state, e).await?))
}

/// Enables or disables any partner's endpoint `before` as its partner
/// would and writes `actor`'s audit entry: the API's action and the
/// dashboard's. `given`: the operator's reason (for disabling, the reason
/// the partner sees; default "disabled by the operator").
pub(crate) async fn set_status_as(
    state: &AppState,
    actor: &admin_audit::Actor,
    before: Endpoint,
    status: EndpointStatus,
    given: Option<&str>,
) -> Result<Endpoint, Problem> {
    if let Some(r) = given {
        check_text("reason", r, 500)?;
    }
    let (action, reason) = match status {
        EndpointStatus::Active => (Action::EndpointEnable, None),
        _ => (
            Action::EndpointDisable,
            Some(given.unwrap_or("disabled by the operator")),
        ),
    };
    let (e, effects) = change_status(state, &before.partner_id, &before.id, status, reason).await?;
    let detail = json!({
        "reason": reason.or(given),
        "previous_status": before.status.as_str(),
        "paused": effects.paused,
        "resumed": effects.resumed,
        "dead": effects.dead,
    });
    actor
        .record(state, action, &e.id, &e.partner_id, detail)
        .await?;
    Ok(e)
}

/// Enable any partner's endpoint: its paused deliveries from within the
/// replay window are due at once. Body optional: `{"reason": "…"}`, kept
/// in the audit log.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), request_body(content = Option<StatusChange>), security(("operator_key" = [])),
    responses((status = 200, description = "The endpoint, enabled", body = AdminEndpointOut), Errors))]
#[post("/v1/admin/endpoints/{id}/enable")]
pub async fn admin_enable_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    set_status(req, &id, payload, &state, EndpointStatus::Active).await
}

/// Disable any partner's endpoint: nothing is sent to it until it is
/// enabled. Body optional: `{"reason": "…"}` (default "disabled by the operator").
#[utoipa::path(tag = "admin", params(("id" = String, Path)), request_body(content = Option<StatusChange>), security(("operator_key" = [])),
    responses((status = 200, description = "The endpoint, disabled", body = AdminEndpointOut), Errors))]
#[post("/v1/admin/endpoints/{id}/disable")]
pub async fn admin_disable_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    set_status(req, &id, payload, &state, EndpointStatus::Disabled).await
}
