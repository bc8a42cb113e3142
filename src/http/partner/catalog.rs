//! `/v1/event-types` and `/v1/limits`: what events exist, with every version
//! of their JSON Schemas and examples, and the limits that apply to the
//! partner.

use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::catalog::PublishedType;
use crate::domain::outcome;
use crate::http::{
    AppState, auth,
    problem::{Errors, Problem},
};

#[derive(Debug, Serialize, ToSchema)]
pub struct EventTypes {
    pub data: Vec<PublishedType>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Retention {
    pub events_days: u64,
    pub deliveries_days: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PageSize {
    pub default: u32,
    pub max: u32,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RateLimit {
    pub requests_per_second: u32,
    pub burst: u32,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Limits {
    pub retention: Retention,
    /// How far back `recover` may reach, in seconds.
    pub replay_window_seconds: u64,
    pub page_size: PageSize,
    pub rate_limit: RateLimit,
    pub max_payload_bytes: usize,
    pub max_batch: usize,
    pub max_secret_overlap_seconds: u64,
    /// Attempts per delivery, and the delay before each.
    pub retry_schedule_seconds: Vec<u64>,
    /// The delivery window: no scheduled attempt starts later than this
    /// after the event was created (`delivery_window_from`).
    pub max_delivery_age_seconds: u64,
    /// Where the window starts: `event_created`, the event's creation (not
    /// when its deliveries were made). A manual replay or recover is one
    /// attempt, requested now, and is not held to it.
    pub delivery_window_from: String,
    /// How an attempt the receiver refused with a 4xx is retried.
    pub client_error: ClientErrorPolicy,
}

/// The retry policy of the `client_error` category.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClientErrorPolicy {
    /// The 4xx statuses that are not `client_error`: 410 stops the
    /// delivery and disables the endpoint; the rest are `http_status`
    /// and honour `Retry-After`.
    pub other_4xx: Vec<u16>,
    /// `schedule`: every other 4xx is retried on the same schedule, within
    /// the same window, as any failure (a receiver usually fixes its
    /// configuration, and the event should then arrive).
    pub retries: String,
    /// Attempts at most, the first included (the schedule's length).
    pub max_attempts: usize,
    /// Always false: a `Retry-After` on a `client_error` answer is ignored.
    pub honours_retry_after: bool,
}

/// Every event type with its description, sensitivity note, and each
/// version's JSON Schema (draft 2020-12) of `data`, example and the older
/// versions it projects onto.
#[utoipa::path(tag = "catalog", security(("partner_key" = [])), responses((status = 200, description = "Every event type with its versions' schemas, examples and projections", body = EventTypes), Errors))]
#[get("/v1/event-types")]
pub async fn event_types(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::partner(&req, &state).await?;
    Ok(HttpResponse::Ok().json(EventTypes {
        data: state.shared.catalog.published(),
    }))
}

/// Retention, replay window, page sizes, rate limits and delivery limits.
#[utoipa::path(tag = "catalog", security(("partner_key" = [])), responses((status = 200, description = "The limits this hookd holds partners to", body = Limits), Errors))]
#[get("/v1/limits")]
pub async fn limits(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    auth::partner(&req, &state).await?;
    let c = &state.shared.config;
    let days = |d: std::time::Duration| d.as_secs() / 86_400;
    let mut other_4xx: Vec<u16> = outcome::RETRYABLE_CLIENT_STATUSES.into();
    other_4xx.push(410);
    other_4xx.sort_unstable();
    Ok(HttpResponse::Ok().json(Limits {
        retention: Retention {
            events_days: days(c.retention.events),
            deliveries_days: days(c.retention.deliveries),
        },
        replay_window_seconds: c.api.replay_window.as_secs(),
        page_size: PageSize {
            default: c.api.page_size_default,
            max: c.api.page_size_max,
        },
        rate_limit: RateLimit {
            requests_per_second: c.api.rate_limit_per_second,
            burst: c.api.rate_limit_burst,
        },
        max_payload_bytes: c.ingest.max_payload_bytes,
        max_batch: c.ingest.max_batch,
        max_secret_overlap_seconds: c.api.max_secret_overlap.as_secs(),
        retry_schedule_seconds: c.delivery.schedule.iter().map(|d| d.as_secs()).collect(),
        max_delivery_age_seconds: c.delivery.max_age.as_secs(),
        delivery_window_from: "event_created".into(),
        client_error: ClientErrorPolicy {
            other_4xx,
            retries: "schedule".into(),
            max_attempts: c.delivery.schedule.len(),
            honours_retry_after: false,
        },
    }))
}
