//! What operators watch: every endpoint actor's health with the work waiting
//! for it, and the Prometheus metrics. An operator key only.

use std::collections::HashMap;

use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    AppState, auth, body, page,
    partner::time,
    problem::{Errors, Problem},
};
use crate::{
    delivery::report::{ActorReport, ReportAll},
    store::{self, backlog::EndpointBacklog},
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ActorsQuery {
    /// Only this partner's endpoints.
    pub partner_id: Option<String>,
    /// How many endpoints, most work waiting first (default 100, at most 1000).
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Actors {
    /// Endpoint actors running in this instance.
    pub running: usize,
    /// Committed events not yet fanned out, and when the oldest was created.
    pub outbox_unpublished: i64,
    pub oldest_unpublished_at: Option<String>,
    pub data: Vec<EndpointHealth>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointHealth {
    pub endpoint_id: String,
    pub partner_id: String,
    /// `active`, `paused` or `disabled`.
    pub status: String,
    /// Deliveries pending, failed (waiting to retry) or being delivered.
    pub waiting: i64,
    /// When the earliest of them is due.
    pub next_attempt_at: Option<String>,
    /// The endpoint's actor in this instance; null when none runs (no work).
    pub actor: Option<ActorOut>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ActorOut {
    #[serde(flatten)]
    pub report: ActorReport,
    /// Until when an open circuit sends nothing.
    pub open_until: Option<String>,
    /// When a sleeping actor claims next.
    pub next_claim_at: Option<String>,
}

impl From<ActorReport> for ActorOut {
    fn from(report: ActorReport) -> ActorOut {
        ActorOut {
            open_until: report.open_until_ms.map(time),
            next_claim_at: report.next_due_ms.map(time),
            report,
        }
    }
}

fn health(b: EndpointBacklog, actor: Option<ActorReport>) -> EndpointHealth {
    EndpointHealth {
        endpoint_id: b.endpoint_id,
        partner_id: b.partner_id,
        status: b.status,
        waiting: b.waiting,
        next_attempt_at: b.next_attempt_at.map(time),
        actor: actor.map(ActorOut::from),
    }
}

async fn reports(state: &AppState) -> Result<Vec<ActorReport>, Problem> {
    state
        .engine
        .fanout
        .send(ReportAll)
        .await
        .map_err(|e| Problem::unavailable(format!("the delivery engine is not running: {e}")))
}

/// Gathers the operator's overview: the database's backlog beside the
/// actors' own reports. Shared by the JSON route and the dashboard.
pub async fn overview(
    state: &AppState,
    partner_id: Option<&str>,
    limit: u32,
) -> Result<Actors, Problem> {
    let db = &state.shared.db;
    let backlog = store::backlog::by_endpoint(db, partner_id, limit).await?;
    let (unpublished, oldest) = store::backlog::unpublished(db).await?;
    let mut by_id: HashMap<String, ActorReport> = reports(state)
        .await?
        .into_iter()
        .map(|r| (r.endpoint_id.clone(), r))
        .collect();
    let running = by_id.len();
    let data = backlog
        .into_iter()
        .map(|b| {
            let actor = by_id.remove(&b.endpoint_id);
            health(b, actor)
        })
        .collect();
    Ok(Actors {
        running,
        outbox_unpublished: unpublished,
        oldest_unpublished_at: oldest.map(time),
        data,
    })
}

/// Endpoint actors and the work waiting for them, most waiting first.
#[utoipa::path(tag = "admin", params(ActorsQuery), security(("operator_key" = [])),
    responses((status = 200, body = Actors), Errors))]
#[get("/v1/admin/actors")]
pub async fn actors(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: ActorsQuery = body::query(req.query_string())?;
    let limit = page::limit(q.limit, 100, 1000)?;
    let overview = overview(&state, q.partner_id.as_deref(), limit).await?;
    Ok(HttpResponse::Ok().json(overview))
}

/// Prometheus metrics (OpenMetrics text): counters of events, deliveries and
/// attempts, attempt durations, and the backlog and actors when scraped.
#[utoipa::path(tag = "admin", security(("operator_key" = [])),
    responses((status = 200, description = "OpenMetrics text", content_type = "application/openmetrics-text", body = String), Errors))]
#[get("/metrics")]
pub async fn metrics(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let shared = &state.shared;
    let m = &shared.metrics;
    for (state, n) in store::backlog::waiting(&shared.db).await?.by_state() {
        m.backlog
            .get_or_create(&crate::metrics::StateLabels { state })
            .set(n);
    }
    let (unpublished, oldest) = store::backlog::unpublished(&shared.db).await?;
    m.outbox_unpublished.set(unpublished);
    let now = shared.clock.now_ms();
    m.outbox_oldest_seconds
        .set(oldest.map_or(0.0, |t| (now - t).max(0) as f64 / 1000.0));
    let reports = reports(&state).await?;
    m.endpoint_actors.set(reports.len() as i64);
    m.circuits_open.set(
        reports
            .iter()
            .filter(|r| r.circuit != crate::delivery::report::Circuit::Closed)
            .count() as i64,
    );
    m.requests_in_flight
        .set(reports.iter().map(|r| r.in_flight as i64).sum());
    Ok(HttpResponse::Ok()
        .content_type(crate::metrics::CONTENT_TYPE)
        .body(m.render()))
}
