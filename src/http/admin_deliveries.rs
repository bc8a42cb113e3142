//! `/v1/admin/deliveries`: operators search every partner's deliveries
//! with the partner API's filters and their own, read one with its
//! attempts, and replay it (written to the audit log). An operator key only.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use super::{
    AppState, admin_audit, auth, body,
    page::Page,
    partner::deliveries::{
        AttemptOut, DeliveryDetail, DeliveryOut, DeliveryQuery, ReplayQueued, queue_replay,
    },
    problem::{Errors, Problem},
};
use crate::{
    domain::outcome::ErrorCategory,
    store::{
        self,
        admin::DeliverySearch,
        audit::Action,
        scoped::{DeliveryRow, for_partner},
    },
};

/// The operator's own filters, beside the partner API's.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OperatorFilters {
    /// Only this partner's deliveries.
    pub partner_id: Option<String>,
    /// The HTTP status of the last attempt.
    pub status_code: Option<i32>,
    /// The error category of the last attempt: `dns`, `connect`, `proxy`,
    /// `tls`, `timeout`, `http_status`, `client_error`, `redirect`, `blocked`,
    /// `body_too_large`, `auth` or `internal`.
    #[param(value_type = Option<ErrorCategory>, inline)]
    pub category: Option<ErrorCategory>,
}

const OPERATOR_FILTERS: [&str; 3] = ["partner_id", "status_code", "category"];

/// A delivery of any partner.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminDeliveryOut {
    pub partner_id: String,
    #[serde(flatten)]
    pub delivery: DeliveryOut,
}

/// A delivery of any partner with all its attempts.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminDeliveryDetail {
    pub partner_id: String,
    #[serde(flatten)]
    pub detail: DeliveryDetail,
}

fn not_found() -> Problem {
    Problem::not_found("no such delivery")
}

/// Splits a query string into the pairs named in `own` and the rest, so
/// each part is parsed, and anything unknown refused, by its own struct.
fn split_query(query: &str, own: &[&str]) -> Result<(String, String), Problem> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
        .map_err(|e| Problem::invalid_query(format!("the query is invalid: {e}")))?;
    let (mine, rest): (Vec<_>, Vec<_>) = pairs
        .into_iter()
        .partition(|(k, _)| own.contains(&k.as_str()));
    let encode = |pairs: Vec<(String, String)>| {
        serde_urlencoded::to_string(pairs).map_err(|e| Problem::internal(&e))
    };
    Ok((encode(mine)?, encode(rest)?))
}

/// Search every partner's deliveries, newest first.
#[utoipa::path(tag = "admin", params(OperatorFilters, DeliveryQuery), security(("operator_key" = [])),
    responses((status = 200, description = "A page of every partner's deliveries, newest first", body = Page<AdminDeliveryOut>), Errors))]
#[get("/v1/admin/deliveries")]
pub async fn admin_list_deliveries(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let (own, rest) = split_query(req.query_string(), &OPERATOR_FILTERS)?;
    let ours: OperatorFilters = body::query(&own)?;
    let q: DeliveryQuery = body::query(&rest)?;
    let (filter, before, limit) = q.search(&state.shared.config.api)?;
    let search = DeliverySearch {
        filter,
        partner_id: ours.partner_id,
        status_code: ours.status_code,
        category: ours.category.map(|c| c.as_str().to_string()),
    };
    let rows = store::admin::deliveries(&state.shared.db, &search, before.as_ref(), limit).await?;
    Ok(HttpResponse::Ok().json(Page::of(
        rows,
        limit,
        |(_, d): &(String, DeliveryRow)| (d.created_at, d.id.as_str()),
        |(partner_id, d)| AdminDeliveryOut {
            partner_id,
            delivery: d.into(),
        },
    )))
}

/// Read any partner's delivery with all its attempts.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 200, description = "The delivery with all its attempts", body = AdminDeliveryDetail), Errors))]
#[get("/v1/admin/deliveries/{id}")]
pub async fn admin_get_delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let partner_id = store::admin::delivery_owner(&state.shared.db, &id)
        .await?
        .ok_or_else(not_found)?;
    let (d, attempts) = for_partner(&state.shared.db, &partner_id)
        .delivery_with_attempts(&id)
        .await?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Ok().json(AdminDeliveryDetail {
        partner_id,
        detail: DeliveryDetail {
            delivery: d.into(),
            attempts: attempts.into_iter().map(AttemptOut::from).collect(),
        },
    }))
}

/// Send any partner's delivery again now, as its partner's replay does;
/// written to the audit log.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 202, description = "Queued: the replay, and when it goes (`sends`)", body = ReplayQueued), Errors))]
#[post("/v1/admin/deliveries/{id}/replay")]
pub async fn admin_replay_delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let actor = admin_audit::operator(&req, &state).await?;
    let queued = replay_as(&state, &actor, &id).await?;
    Ok(HttpResponse::Accepted().json(queued))
}

/// Replays any partner's delivery as its partner's replay does and writes
/// `actor`'s audit entry: the API's action and the dashboard's.
pub(crate) async fn replay_as(
    state: &AppState,
    actor: &admin_audit::Actor,
    id: &str,
) -> Result<ReplayQueued, Problem> {
    let partner_id = store::admin::delivery_owner(&state.shared.db, id)
        .await?
        .ok_or_else(not_found)?;
    let queued = queue_replay(state, &partner_id, id).await?;
    let detail = json!({"replay_id": queued.replay_id, "event_id": queued.event_id, "endpoint_id": queued.endpoint_id});
    actor
        .record(
            state,
            Action::DeliveryReplay,
            &queued.delivery_id,
            &partner_id,
            detail,
        )
        .await?;
    Ok(queued)
}
