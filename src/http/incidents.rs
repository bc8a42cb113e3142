//! Incidents through the API: a partner lists its own (`GET /v1/incidents`);
//! an operator lists every partner's, opens one by hand with a message and
//! resolves it (`/v1/admin/incidents`, written to the audit log). Opening
//! and resolving tell the partner, as the detector's do.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use sea_orm::DatabaseConnection;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use super::{
    AppState, admin_audit, auth, body,
    partner::time,
    problem::{Errors, Problem},
};
use crate::{
    delivery::messages::Wake,
    domain::incident::{self, Cause, Incident, OpenedBy},
    store::{
        self,
        audit::Action,
        incidents::{self as stored, Opening},
    },
};

/// An incident: a time when hookd's own delivery to the partner was impaired.
#[derive(Debug, Serialize, ToSchema)]
pub struct IncidentOut {
    pub id: String,
    pub partner_id: String,
    /// `backlog`, `database`, `instances` or `manual`.
    pub cause: String,
    pub message: String,
    /// `open` or `resolved`.
    pub state: String,
    pub started_at: String,
    pub resolved_at: Option<String>,
    /// Events delayed inside the range, counted when it resolved.
    pub delayed_events: Option<i64>,
    /// `detector` (hookd) or `operator`.
    pub opened_by: String,
}

impl From<Incident> for IncidentOut {
    fn from(i: Incident) -> Self {
        IncidentOut {
            state: if i.is_open() { "open" } else { "resolved" }.into(),
            id: i.id,
            partner_id: i.partner_id,
            cause: i.cause,
            message: i.message,
            started_at: time(i.started_at),
            resolved_at: i.resolved_at.map(time),
            delayed_events: i.delayed_events,
            opened_by: i.opened_by,
        }
    }
}

/// Incidents, open ones first, then the latest.
#[derive(Debug, Serialize, ToSchema)]
pub struct IncidentList {
    pub data: Vec<IncidentOut>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct IncidentQuery {
    /// `open` for the open ones only; default `all`.
    pub state: Option<String>,
    /// At most this many (default 50, at most 500).
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AdminIncidentQuery {
    /// `open` for the open ones only; default `all`.
    pub state: Option<String>,
    /// At most this many (default 50, at most 500).
    pub limit: Option<i64>,
    /// Only this partner's.
    pub partner_id: Option<String>,
}

/// Open one by hand.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenIncident {
    pub partner_id: String,
    /// What happened, in words the partner reads: 1 to 1000 characters.
    #[schema(min_length = 1, max_length = 1000)]
    pub message: String,
}

/// The query's filter: (open only, limit).
fn filter(state: Option<&str>, limit: Option<i64>) -> Result<(bool, u32), Problem> {
    let open_only = match state {
        None | Some("all") => false,
        Some("open") => true,
        Some(other) => return Err(Problem::not_one_of("state", other, &["open", "all"])),
    };
    let limit = match limit {
        None => 50,
        Some(n @ 1..=500) => n as u32,
        Some(_) => return Err(Problem::out_of_range("limit", "must be 1 to 500")),
    };
    Ok((open_only, limit))
}

fn listed(rows: Vec<Incident>) -> IncidentList {
    IncidentList {
        data: rows.into_iter().map(IncidentOut::from).collect(),
    }
}

/// Your incidents: times when hookd's own delivery to you was impaired.
#[utoipa::path(tag = "partner", params(IncidentQuery), security(("partner_key" = [])),
    responses((status = 200, description = "Your incidents, open ones first", body = IncidentList), Errors))]
#[get("/v1/incidents")]
pub async fn list_incidents(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: IncidentQuery = body::query(req.query_string())?;
    let (open_only, limit) = filter(q.state.as_deref(), q.limit)?;
    let rows = stored::list(&state.shared.db, Some(&partner), open_only, limit).await?;
    Ok(HttpResponse::Ok().json(listed(rows)))
}

/// Every partner's incidents, or one partner's.
#[utoipa::path(tag = "admin", params(AdminIncidentQuery), security(("operator_key" = [])),
    responses((status = 200, description = "Incidents, open ones first", body = IncidentList), Errors))]
#[get("/v1/admin/incidents")]
pub async fn admin_list_incidents(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: AdminIncidentQuery = body::query(req.query_string())?;
    let (open_only, limit) = filter(q.state.as_deref(), q.limit)?;
    let rows = stored::list(&state.shared.db, q.partner_id.as_deref(), open_only, limit).await?;
    Ok(HttpResponse::Ok().json(listed(rows)))
}

/// Open an incident for a partner by hand: it is told at once
/// (`hookd.incident.opened`). Written to the audit log.
#[utoipa::path(tag = "admin", request_body = OpenIncident, security(("operator_key" = [])),
    responses((status = 201, description = "Opened: the incident", body = IncidentOut), Errors))]
#[post("/v1/admin/incidents")]
pub async fn open_incident(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let actor = admin_audit::operator(&req, &state).await?;
    let input: OpenIncident = state.read_json(&req, payload).await?;
    let opened = open_as(&state, &input.partner_id, &input.message).await?;
    let detail = json!({"message": opened.message});
    actor
        .record(
            &state,
            Action::IncidentOpen,
            &opened.id,
            &opened.partner_id,
            detail,
        )
        .await?;
    Ok(HttpResponse::Created().json(IncidentOut::from(opened)))
}

/// Opens a manual incident for `partner_id`: the API's action and the
/// dashboard's.
pub(crate) async fn open_as(
    state: &AppState,
    partner_id: &str,
    message: &str,
) -> Result<Incident, Problem> {
    let _turn = state.shared.write_turn().await;
    let now = state.shared.clock.now_ms();
    let opened = open_manual(&state.shared.db, partner_id, message, now).await?;
    state.engine.fanout.do_send(Wake);
    Ok(opened)
}

/// Checks and opens a manual incident, its notice queued: what every
/// surface does (the API, the dashboard, the CLI).
pub async fn open_manual(
    db: &DatabaseConnection,
    partner_id: &str,
    message: &str,
    now: i64,
) -> Result<Incident, Problem> {
    let message =
        incident::message(message).map_err(|e| Problem::invalid("message", e.to_string()))?;
    if store::partners::find(db, partner_id).await?.is_none() {
        return Err(
            Problem::not_found(format!("partner {partner_id} does not exist"))
                .with_field("partner_id"),
        );
    }
    let opening = Opening {
        partner_id,
        cause: Cause::Manual,
        message: &message,
        started_at: now,
        opened_by: OpenedBy::Operator,
    };
    stored::open_now(db, &opening, now).await?.ok_or_else(|| {
        Problem::conflict(format!(
            "partner {partner_id} has an open manual incident already: resolve it first"
        ))
    })
}

/// Resolve an incident (any cause): its partner is told
/// (`hookd.incident.resolved`) with the range and the delayed count.
/// Written to the audit log.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 200, description = "Resolved: the incident", body = IncidentOut), Errors))]
#[post("/v1/admin/incidents/{id}/resolve")]
pub async fn resolve_incident(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let actor = admin_audit::operator(&req, &state).await?;
    let resolved = resolve_as(&state, &id).await?;
    let detail = json!({"delayed_events": resolved.delayed_events});
    actor
        .record(
            &state,
            Action::IncidentResolve,
            &resolved.id,
            &resolved.partner_id,
            detail,
        )
        .await?;
    Ok(HttpResponse::Ok().json(IncidentOut::from(resolved)))
}

/// Resolves an incident: the API's action and the dashboard's.
pub(crate) async fn resolve_as(state: &AppState, id: &str) -> Result<Incident, Problem> {
    let _turn = state.shared.write_turn().await;
    let now = state.shared.clock.now_ms();
    let resolved = resolve_manual(&state.shared.db, id, now).await?;
    state.engine.fanout.do_send(Wake);
    Ok(resolved)
}

/// Resolves an incident by hand, its notice queued: what every surface does.
pub async fn resolve_manual(
    db: &DatabaseConnection,
    id: &str,
    now: i64,
) -> Result<Incident, Problem> {
    if stored::get(db, id).await?.is_none() {
        return Err(Problem::not_found(format!("incident {id} does not exist")));
    }
    stored::resolve_now(db, id, now)
        .await?
        .ok_or_else(|| Problem::conflict(format!("incident {id} is resolved already")))
}
