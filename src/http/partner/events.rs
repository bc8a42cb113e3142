//! `/v1/events`: the partner's event feed, read by cursor, and one event with
//! a summary of its deliveries. The feed is the authoritative record.

use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::deliveries::DeliveryOut;
use crate::{
    domain::event::{NewEvent, envelope_json},
    http::{
        AppState, auth, body, page,
        problem::{Errors, Problem},
    },
    store::scoped::for_partner,
};

/// An event, exactly as its deliveries carry it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(value_type = Object)]
pub struct EventOut(Box<serde_json::value::RawValue>);

impl From<&NewEvent> for EventOut {
    fn from(e: &NewEvent) -> Self {
        EventOut(envelope_json(e))
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Feed {
    pub data: Vec<EventOut>,
    /// Pass as `after` to continue; always present, so a reader can poll.
    pub next_cursor: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EventDetail {
    pub event: EventOut,
    pub deliveries: Vec<DeliveryOut>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FeedQuery {
    /// A `next_cursor`; absent reads from the beginning.
    pub after: Option<String>,
    pub limit: Option<i64>,
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub event_type: Option<String>,
}

/// The partner's published events in feed order. Following `next_cursor`
/// never misses or repeats an event.
#[utoipa::path(tag = "events", params(FeedQuery), security(("partner_key" = [])),
    responses((status = 200, body = Feed), Errors))]
#[get("/v1/events")]
pub async fn feed(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: FeedQuery = body::query(req.query_string())?;
    let api = &state.shared.config.api;
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    let after = q
        .after
        .as_deref()
        .map(page::decode_seq)
        .transpose()?
        .unwrap_or(0);
    let rows = for_partner(&state.shared.db, &partner)
        .feed(after, limit, q.event_type.as_deref())
        .await?;
    let last = rows.last().map_or(after, |(seq, _)| *seq);
    Ok(HttpResponse::Ok().json(Feed {
        data: rows.iter().map(|(_, e)| EventOut::from(e)).collect(),
        next_cursor: page::encode_seq(last),
    }))
}

/// One event with its deliveries.
#[utoipa::path(tag = "events", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, body = EventDetail), Errors))]
#[get("/v1/events/{id}")]
pub async fn get_event(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let (event, deliveries) = for_partner(&state.shared.db, &partner)
        .event(&id)
        .await?
        .ok_or_else(|| Problem::not_found("no such event"))?;
    Ok(HttpResponse::Ok().json(EventDetail {
        event: EventOut::from(&event),
        deliveries: deliveries.into_iter().map(DeliveryOut::from).collect(),
    }))
}
