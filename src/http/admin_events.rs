//! `GET /v1/admin/events?state=rejected`: events the fanout refused because
//! they fail the catalog (written with plain SQL around the API), with the
//! reason, newest first. They are never delivered. An operator key only.

use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    AppState, auth, body, page,
    problem::{Errors, Problem},
};
use crate::{domain::event::format_time, store};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// `rejected`: the only state listed here (the feed lists published ones).
    pub state: String,
    pub limit: Option<i64>,
}

/// A rejected event.
#[derive(Debug, Serialize, ToSchema)]
pub struct RejectedEvent {
    pub event_id: String,
    #[serde(rename = "type")]
    pub event_type: String,
    pub partner_id: String,
    pub schema_version: String,
    pub created_at: String,
    pub rejected_at: String,
    /// What fails: the type, the version or each offending value by pointer.
    pub reason: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RejectedEvents {
    pub data: Vec<RejectedEvent>,
}

/// Events the fanout rejected (they fail the catalog), newest first.
#[utoipa::path(tag = "admin", params(EventsQuery), security(("operator_key" = [])),
    responses((status = 200, body = RejectedEvents), Errors))]
#[get("/v1/admin/events")]
pub async fn list_events(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: EventsQuery = body::query(req.query_string())?;
    if q.state != "rejected" {
        return Err(Problem::invalid_query(format!(
            "state `{}` is not listed here; use state=rejected (published events are in the partner's feed)",
            q.state
        )));
    }
    let api = &state.shared.config.api;
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    let rows = store::outbox::rejected(&state.shared.db, u64::from(limit)).await?;
    Ok(HttpResponse::Ok().json(RejectedEvents {
        data: rows
            .into_iter()
            .map(|m| RejectedEvent {
                event_id: m.event_id,
                event_type: m.r#type,
                partner_id: m.partner_id,
                schema_version: m.schema_version,
                created_at: format_time(m.created_at),
                rejected_at: format_time(m.published_at.unwrap_or(m.created_at)),
                reason: m.rejected_reason.unwrap_or_default(),
            })
            .collect(),
    }))
}
