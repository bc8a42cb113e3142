//! One endpoint as `GET /v1/admin/endpoints/{id}` shows it to an operator:
//! the endpoint with its backlog, its circuit as its owner's actor last
//! saved it, and its last failed attempt. `hookd endpoint get` shows the same.

use actix_web::{HttpRequest, HttpResponse, get, web};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use utoipa::ToSchema;

use super::{
    AppState,
    admin_endpoints::{AdminEndpointOut, find},
    auth,
    observe::stored_circuit,
    partner::time,
    problem::{Errors, Problem},
};
use crate::{
    delivery::report::Circuit,
    store::{self, StoreError, endpoints::Endpoint},
};

/// An endpoint's circuit breaker, as kept on its row.
#[derive(Debug, Serialize, ToSchema)]
pub struct CircuitOut {
    /// `closed` (requests go), `open` (nothing is sent until `open_until`)
    /// or `half_open` (one probe decides).
    pub state: Circuit,
    pub consecutive_failures: u32,
    /// Until when an open circuit sends nothing.
    pub open_until: Option<String>,
}

/// The endpoint's latest failed attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct LastError {
    pub delivery_id: String,
    pub at: String,
    pub status_code: Option<i32>,
    /// `dns`, `connect`, `proxy`, `tls`, `timeout`, `http_status`, `client_error`, `redirect`, `blocked`, `body_too_large`, `auth` or `internal`.
    pub error_category: String,
    pub error_detail: Option<String>,
}

/// Any partner's endpoint with its backlog, circuit and last error.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminEndpointDetail {
    #[serde(flatten)]
    pub endpoint: AdminEndpointOut,
    pub circuit: CircuitOut,
    /// Null when no attempt has failed.
    pub last_error: Option<LastError>,
}

/// Reads what the detail adds to `e`, at `now_ms`.
pub async fn of(
    db: &DatabaseConnection,
    e: Endpoint,
    now_ms: i64,
) -> Result<AdminEndpointDetail, StoreError> {
    let mut backlogs = store::admin::backlogs(db, std::slice::from_ref(&e.id)).await?;
    let saved = store::endpoint_views::one(db, &e.id)
        .await?
        .map(|s| s.circuit)
        .unwrap_or_default();
    let last = store::endpoint_views::last_failure(db, &e.id).await?;
    let b = backlogs.remove(&e.id).unwrap_or_default();
    Ok(AdminEndpointDetail {
        endpoint: AdminEndpointOut::of(e, b),
        circuit: CircuitOut {
            state: stored_circuit(saved.open_until_ms, now_ms),
            consecutive_failures: saved.consecutive_failures,
            open_until: saved.open_until_ms.filter(|t| *t > now_ms).map(time),
        },
        last_error: last.map(|a| LastError {
            delivery_id: a.delivery_id,
            at: time(a.started_at),
            status_code: a.status_code,
            error_category: a.error_category.unwrap_or_default(),
            error_detail: a.error_detail,
        }),
    })
}

/// Read any partner's endpoint with what it holds, its circuit and its last error.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 200, description = "The endpoint with its backlog, circuit and last error", body = AdminEndpointDetail), Errors))]
#[get("/v1/admin/endpoints/{id}")]
pub async fn admin_get_endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let e = find(&state, &id).await?;
    let now = state.shared.clock.now_ms();
    Ok(HttpResponse::Ok().json(of(&state.shared.db, e, now).await?))
}
