//! Ordered subjects through the operator API: any endpoint's held subjects
//! (`GET /v1/admin/endpoints/{id}/held-subjects`) and skipping any
//! partner's dead head that holds its subject
//! (`POST /v1/admin/deliveries/{id}/skip`, written to the audit log).

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde_json::json;

use super::{
    AppState, admin_audit,
    admin_endpoints::find,
    partner::{
        deliveries::DeliveryOut,
        ordering::{HeldSubjects, skip},
    },
    problem::{Errors, Problem},
};
use crate::store::{self, audit::Action};

/// Any endpoint's subjects held up behind their heads, and why.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 200, description = "The held subjects", body = HeldSubjects), Errors))]
#[get("/v1/admin/endpoints/{id}/held-subjects")]
pub async fn admin_held_subjects(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    admin_audit::operator(&req, &state).await?;
    let endpoint = find(&state, &id).await?;
    let held = store::ordering::held(&state.shared.db, &endpoint.id, 500).await?;
    Ok(HttpResponse::Ok().json(HeldSubjects::of(endpoint, held)))
}

/// Let any partner's dead delivery that holds its subject go, as its
/// partner's skip does; written to the audit log.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 200, description = "Skipped: the delivery, still dead", body = DeliveryOut), Errors))]
#[post("/v1/admin/deliveries/{id}/skip")]
pub async fn admin_skip_delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let actor = admin_audit::operator(&req, &state).await?;
    let skipped = skip_as(&state, &actor, &id).await?;
    Ok(HttpResponse::Ok().json(skipped))
}

/// Skips any partner's delivery and writes `actor`'s audit entry: the
/// API's action and the dashboard's.
pub(crate) async fn skip_as(
    state: &AppState,
    actor: &admin_audit::Actor,
    id: &str,
) -> Result<DeliveryOut, Problem> {
    let partner_id = store::admin::delivery_owner(&state.shared.db, id)
        .await?
        .ok_or_else(|| Problem::not_found("no such delivery"))?;
    let skipped = skip(state, &partner_id, id).await?;
    let detail = json!({"event_id": skipped.event_id, "endpoint_id": skipped.endpoint_id});
    actor
        .record(
            state,
            Action::DeliverySkip,
            &skipped.id,
            &partner_id,
            detail,
        )
        .await?;
    Ok(skipped)
}
