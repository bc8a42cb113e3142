//! `/v1/events`: the partner's event feed, read by cursor and bounded by
//! creation time, and one event with a summary of its deliveries. The feed
//! is hookd's record of what it delivered; the host's own API holds the
//! authoritative state.

use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{deliveries::DeliveryOut, event_range};
use crate::{
    catalog::render::{Rendering, choose},
    domain::event::{NewEvent, envelope, envelope_at, envelope_json, envelope_with_data},
    http::{
        AppState, auth, body, page,
        problem::{Errors, Problem},
    },
    store::{scoped::for_partner, scoped_feed::FeedFilter},
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
    /// Pass as `after` to continue (with the same `since`, `until` and
    /// `type`: the cursor is a position in the feed, not the filter);
    /// always present, so a reader can poll.
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
    /// RFC 3339: only events created at or after this time (no earlier than
    /// `retention.events_days` of `GET /v1/limits` ago).
    pub since: Option<String>,
    /// RFC 3339: only events created before this time; after `since`.
    pub until: Option<String>,
}

/// The partner's published events in feed order, optionally of one type and
/// created within `since`..`until`. Following `next_cursor` (passing the
/// same filters again) never misses or repeats an event.
#[utoipa::path(tag = "events", params(FeedQuery), security(("partner_key" = [])),
    responses((status = 200, description = "A page of the feed; `next_cursor` continues it (also when the page is empty)", body = Feed), Errors))]
#[get("/v1/events")]
pub async fn feed(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: FeedQuery = body::query(req.query_string())?;
    let api = &state.shared.config.api;
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    let after = page::feed_after(q.after.as_deref())?;
    let range = event_range::read(
        q.since.as_deref(),
        q.until.as_deref(),
        state.shared.clock.now_ms(),
        event_range::kept_ms(&state.shared.config.retention),
    )?;
    let filter = FeedFilter {
        event_type: q.event_type,
        since: range.since,
        until: range.until,
    };
    let rows = for_partner(&state.shared.db, &partner)
        .feed(&filter, after, limit)
        .await?;
    let last = rows.last().map_or(after, |(seq, _)| *seq);
    Ok(HttpResponse::Ok().json(Feed {
        data: rows.iter().map(|(_, e)| EventOut::from(e)).collect(),
        next_cursor: page::encode_seq(last),
    }))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventQuery {
    /// Show the event as an endpoint pinned to this version receives it.
    pub schema_version: Option<u32>,
}

/// One event with its deliveries; with `schema_version`, the event as an
/// endpoint pinned to that version receives it (404 when it has no valid
/// rendering there, as such a delivery is `skipped`).
#[utoipa::path(tag = "events", params(("id" = String, Path), EventQuery), security(("partner_key" = [])),
    responses((status = 200, description = "The event with its deliveries", body = EventDetail), Errors))]
#[get("/v1/events/{id}")]
pub async fn get_event(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: EventQuery = body::query(req.query_string())?;
    let (event, deliveries) = for_partner(&state.shared.db, &partner)
        .event(&id)
        .await?
        .ok_or_else(|| Problem::not_found("no such event"))?;
    let shown = match q.schema_version {
        None => EventOut::from(&event),
        Some(v) => {
            let rendered = match choose(
                &state.shared.catalog,
                &event.event_type,
                event.schema_version,
                &event.payload,
                &event.renditions,
                Some(v),
            ) {
                Rendering::AsSent => Some(envelope(&event)),
                Rendering::Stored { version } => envelope_at(&event, version),
                Rendering::Projected { version, data } => {
                    Some(envelope_with_data(&event, version, &data))
                }
                Rendering::Skipped => None,
            };
            let text = rendered
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .and_then(|t| serde_json::value::RawValue::from_string(t).ok())
                .ok_or_else(|| {
                    Problem::not_found(format!(
                        "the event has no valid rendering at version {v} (an endpoint pinned to it gets the delivery `skipped`)"
                    ))
                })?;
            EventOut(text)
        }
    };
    Ok(HttpResponse::Ok().json(EventDetail {
        event: shown,
        deliveries: deliveries.into_iter().map(DeliveryOut::from).collect(),
    }))
}
