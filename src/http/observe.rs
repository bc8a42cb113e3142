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
    delivery::report::{ActorReport, Circuit, ReportAll},
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
    /// The instance that answered.
    pub instance_id: String,
    /// Endpoint actors running in this instance.
    pub running: usize,
    /// Endpoint actors running in the whole cluster (as of each instance's
    /// last heartbeat).
    pub running_in_cluster: i64,
    pub instances: Vec<InstanceOut>,
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
    /// Since when every attempt to it has failed (an active endpoint with
    /// one is failing).
    pub failing_since: Option<String>,
    /// Deliveries pending, failed (waiting to retry) or being delivered.
    pub waiting: i64,
    /// When the earliest of them is due.
    pub next_attempt_at: Option<String>,
    /// Deliveries claimed and still leased, on whichever instance.
    pub in_flight: i64,
    /// The instance that holds the endpoint (null: none yet, or handed back).
    pub owner: Option<String>,
    /// The circuit as kept on the endpoint row, written by its owner's actor
    /// when it changes: the same from every instance.
    pub circuit: crate::delivery::report::Circuit,
    pub consecutive_failures: u32,
    /// Until when an open circuit sends nothing.
    pub open_until: Option<String>,
    /// The endpoint's actor in this instance; null when none runs here (no
    /// work, or another instance owns it).
    pub actor: Option<ActorOut>,
    /// The row's circuit as saved (Unix ms, also when it has passed).
    #[serde(skip)]
    pub saved_open_until_ms: Option<i64>,
    /// `failing_since` in Unix ms.
    #[serde(skip)]
    pub failing_since_ms: Option<i64>,
}

/// One instance of the cluster.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstanceOut {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub version: String,
    /// The address its API listens on.
    pub listen: String,
    pub started_at: String,
    pub heartbeat_at: String,
    /// Milliseconds since its last heartbeat, by the database's clock; past
    /// `cluster.lease_ttl` the instance is dead and its endpoints move.
    pub heartbeat_age_ms: i64,
    pub alive: bool,
    /// Stopping: finishing its attempts in flight.
    pub draining: bool,
    /// What it runs: `all`, `api` (no deliveries) or `delivery` (no API).
    pub role: String,
    pub endpoints_owned: i64,
    pub actors: i32,
    pub in_flight: i32,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Instances {
    /// The instance that answered.
    pub instance_id: String,
    pub data: Vec<InstanceOut>,
}

fn instance_out(i: store::cluster::InstanceRow, ttl_ms: i64) -> InstanceOut {
    InstanceOut {
        alive: i.heartbeat_age_ms < ttl_ms,
        id: i.id,
        host: i.host,
        pid: i.pid,
        version: i.version,
        listen: i.listen,
        started_at: time(i.started_at),
        heartbeat_at: time(i.heartbeat_at),
        heartbeat_age_ms: i.heartbeat_age_ms,
        draining: i.draining,
        role: i.role,
        endpoints_owned: i.endpoints_owned,
        actors: i.actors,
        in_flight: i.in_flight,
    }
}

async fn instances_of(state: &AppState) -> Result<Vec<InstanceOut>, Problem> {
    let ttl_ms = state.shared.config.cluster.lease_ttl.as_millis() as i64;
    Ok(store::cluster::instances(&state.shared.db)
        .await?
        .into_iter()
        .map(|i| instance_out(i, ttl_ms))
        .collect())
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

/// The circuit kept on an endpoint row (open until `open_until_ms`) as it
/// stands at `now_ms`: past that time, one probe decides (half open).
pub fn stored_circuit(open_until_ms: Option<i64>, now_ms: i64) -> Circuit {
    match open_until_ms {
        None => Circuit::Closed,
        Some(t) if t > now_ms => Circuit::Open,
        Some(_) => Circuit::HalfOpen,
    }
}

fn health(b: EndpointBacklog, actor: Option<ActorReport>, now_ms: i64) -> EndpointHealth {
    let circuit = stored_circuit(b.circuit.open_until_ms, now_ms);
    EndpointHealth {
        in_flight: b.in_flight,
        owner: b.owner,
        circuit,
        consecutive_failures: b.circuit.consecutive_failures,
        open_until: b.circuit.open_until_ms.filter(|t| *t > now_ms).map(time),
        saved_open_until_ms: b.circuit.open_until_ms,
        failing_since_ms: b.failing_since,
        failing_since: b.failing_since.map(time),
        endpoint_id: b.endpoint_id,
        partner_id: b.partner_id,
        status: b.status,
        waiting: b.waiting,
        next_attempt_at: b.next_attempt_at.map(time),
        actor: actor.map(ActorOut::from),
    }
}

/// Every endpoint actor's report in this instance.
pub(crate) async fn reports(state: &AppState) -> Result<Vec<ActorReport>, Problem> {
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
    let now = state.shared.clock.now_ms();
    let backlog = store::backlog::by_endpoint(db, partner_id, limit, now).await?;
    let cluster = instances_of(state).await?;
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
            health(b, actor, now)
        })
        .collect();
    Ok(Actors {
        instance_id: state.shared.leases.instance_id().to_string(),
        running,
        running_in_cluster: cluster
            .iter()
            .filter(|i| i.alive)
            .map(|i| i64::from(i.actors))
            .sum(),
        instances: cluster,
        outbox_unpublished: unpublished,
        oldest_unpublished_at: oldest.map(time),
        data,
    })
}

/// Endpoint actors and the work waiting for them, most waiting first.
#[utoipa::path(tag = "admin", params(ActorsQuery), security(("operator_key" = [])),
    responses((status = 200, description = "Endpoint actors and the work waiting for them, most waiting first", body = Actors), Errors))]
#[get("/v1/admin/actors")]
pub async fn actors(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: ActorsQuery = body::query(req.query_string())?;
    let limit = page::limit(q.limit, 100, 1000)?;
    let overview = overview(&state, q.partner_id.as_deref(), limit).await?;
    Ok(HttpResponse::Ok().json(overview))
}

/// The instances of the cluster on this database, oldest first: heartbeat
/// age, endpoints held, actors and requests in flight.
#[utoipa::path(tag = "admin", security(("operator_key" = [])),
    responses((status = 200, description = "The instances on this database, oldest first", body = Instances), Errors))]
#[get("/v1/admin/instances")]
pub async fn instances(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    Ok(HttpResponse::Ok().json(Instances {
        instance_id: state.shared.leases.instance_id().to_string(),
        data: instances_of(&state).await?,
    }))
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
    for (status, n) in store::backlog::endpoints_by_status(&shared.db).await? {
        m.endpoints
            .get_or_create(&crate::metrics::StatusLabels { status })
            .set(n);
    }
    let now = shared.clock.now_ms();
    let failing =
        store::backlog::failing_endpoints(&shared.db, crate::metrics::FAILING_SERIES).await?;
    // Recovered endpoints leave the family: only failing ones are series.
    m.endpoint_failing.clear();
    for (endpoint, partner, since) in failing {
        m.endpoint_failing
            .get_or_create(&crate::metrics::EndpointLabels { endpoint, partner })
            .set((now - since).max(0) as f64 / 1000.0);
    }
    let stuck = store::backlog::stuck(&shared.db, shared.config.delivery.schedule.len()).await?;
    m.dead_now.set(stuck.dead);
    m.paused_now.set(stuck.paused);
    m.retry_saturation.set(stuck.saturated);
    let (unpublished, oldest) = store::backlog::unpublished(&shared.db).await?;
    m.outbox_unpublished.set(unpublished);
    m.outbox_oldest_seconds
        .set(oldest.map_or(0.0, |t| (now - t).max(0) as f64 / 1000.0));
    let reports = reports(&state).await?;
    m.endpoint_actors.set(reports.len() as i64);
    m.circuits_open.set(
        reports
            .iter()
            .filter(|r| r.circuit != Circuit::Closed)
            .count() as i64,
    );
    let activity = &shared.activity;
    m.requests_in_flight.set(activity.in_flight() as i64);
    m.attempts_unrecorded.set(activity.unrecorded() as i64);
    m.endpoints_oldest_first.set(shared.behind.count() as i64);
    let budget = &shared.budget;
    m.connections_held.set(budget.in_use() as i64);
    m.connections_max.set(budget.total() as i64);
    m.connections_waiting.set(budget.waiting() as i64);
    Ok(HttpResponse::Ok()
        .content_type(crate::metrics::CONTENT_TYPE)
        .body(m.render()))
}
