//! `/v1/deliveries`: search a partner's deliveries, read one with its
//! attempts, and replay it.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::time;
use crate::{
    config::ApiConfig,
    delivery::messages::EndpointChanged,
    http::{
        AppState, auth, body,
        page::{self, Page},
        problem::{Errors, Problem},
    },
    store::{
        endpoints::EndpointStatus,
        entity::attempt,
        scoped::{DeliveryFilter, DeliveryRow, Position, for_partner},
    },
};

/// Every state a delivery can be in, as searches name them.
pub const STATES: [&str; 9] = [
    "waiting",
    "pending",
    "paused",
    "delivering",
    "delivered",
    "failed",
    "dead",
    "cancelled",
    "skipped",
];

/// One event's delivery to one endpoint.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryOut {
    pub id: String,
    pub event_id: String,
    pub event_type: String,
    pub endpoint_id: String,
    /// `waiting` (behind an earlier delivery of its subject, on an endpoint
    /// that orders by subject), `pending`, `delivering`, `delivered`,
    /// `failed` (a retry is scheduled),
    /// `paused` (its endpoint is disabled: enabling it resumes the delivery
    /// within the replay window; otherwise it is dead at its maximum age),
    /// `dead`, or `cancelled` (closed unsent: it no longer qualified for the
    /// endpoint when its attempt came; see `reason`).
    pub state: String,
    pub attempt_count: i32,
    /// When the next scheduled attempt is due (pending and failed deliveries).
    pub next_attempt_at: Option<String>,
    pub last_status: Option<i32>,
    pub last_latency_ms: Option<i32>,
    /// The last attempt's error category (see the attempts' `error_category`).
    #[schema(value_type = Option<crate::domain::outcome::ErrorCategory>, inline)]
    pub last_error_category: Option<String>,
    /// Why it was closed without an attempt: `endpoint-unsubscribed` (the
    /// endpoint's event types no longer take the event's type) or
    /// `endpoint-of-another-partner`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<DeliveryRow> for DeliveryOut {
    fn from(d: DeliveryRow) -> Self {
        let due = matches!(d.state.as_str(), "pending" | "failed");
        DeliveryOut {
            next_attempt_at: due.then(|| time(d.next_attempt_at)),
            id: d.id,
            event_id: d.event_id,
            event_type: d.event_type,
            endpoint_id: d.endpoint_id,
            state: d.state,
            attempt_count: d.attempt_count,
            last_status: d.last_status,
            last_latency_ms: d.last_latency_ms,
            last_error_category: d.last_error_category,
            reason: d.reason,
            created_at: time(d.created_at),
            updated_at: time(d.updated_at),
        }
    }
}

/// One attempt: what was sent when, and what came back.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptOut {
    pub id: String,
    pub attempt_no: i32,
    /// `scheduled` or `manual`.
    pub trigger: String,
    pub started_at: String,
    pub latency_ms: Option<i32>,
    /// Null when no status was read, including an `http_status` failure whose
    /// response head was too large to parse.
    pub status_code: Option<i32>,
    /// `dns`, `connect`, `proxy`, `tls`, `timeout`, `http_status`, `client_error`, `redirect`, `blocked`, `body_too_large`, `auth` or `internal`.
    /// `client_error`: a 4xx other than 408, 410, 425 and 429, a persistent receiver error.
    #[schema(value_type = Option<crate::domain::outcome::ErrorCategory>, inline)]
    pub error_category: Option<String>,
    pub error_detail: Option<String>,
    /// At most 1 KiB of the response, with credentials redacted.
    pub response_excerpt: Option<String>,
    pub remote_addr: Option<String>,
    /// The endpoint's URL when the attempt was sent (it may have changed
    /// since), without userinfo and with secret query values `redacted`, at
    /// most 1 KiB. Null for attempts recorded before hookd kept it.
    pub url: Option<String>,
    /// When the retry this attempt scheduled is due; null when it was the
    /// last attempt, succeeded, or was a manual replay.
    pub next_attempt_at: Option<String>,
    /// A 3xx answer's `Location` (not followed), redacted like `url`.
    pub location: Option<String>,
}

impl From<attempt::Model> for AttemptOut {
    fn from(a: attempt::Model) -> Self {
        AttemptOut {
            id: a.id,
            attempt_no: a.attempt_no,
            trigger: a.trigger,
            started_at: time(a.started_at),
            latency_ms: a.latency_ms,
            status_code: a.status_code,
            error_category: a.error_category,
            error_detail: a.error_detail,
            response_excerpt: a.response_excerpt,
            remote_addr: a.remote_addr,
            url: a.url,
            next_attempt_at: a.next_attempt_at.map(time),
            location: a.location,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryDetail {
    #[serde(flatten)]
    pub delivery: DeliveryOut,
    pub attempts: Vec<AttemptOut>,
}

/// A queued replay, and when it goes.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReplayQueued {
    pub replay_id: String,
    pub delivery_id: String,
    pub event_id: String,
    pub endpoint_id: String,
    /// `now`: sent at once, whatever the endpoint's circuit (through an open
    /// circuit the replay is its probe; a probe already on the wire is
    /// answered first, within the request timeout). `when-enabled`: the
    /// endpoint is disabled, and the replay waits until it is enabled.
    pub sends: ReplaySends,
    /// What the replay waits for, in words; absent when it goes now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReplaySends {
    Now,
    WhenEnabled,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeliveryQuery {
    pub endpoint_id: Option<String>,
    pub event_id: Option<String>,
    pub event_type: Option<String>,
    /// `pending`, `paused`, `delivering`, `delivered`, `failed`, `dead`,
    /// `cancelled` or `skipped`.
    pub state: Option<String>,
    /// RFC 3339: created at or after.
    pub since: Option<String>,
    /// RFC 3339: created before.
    pub until: Option<String>,
    pub after: Option<String>,
    pub limit: Option<i64>,
}

impl DeliveryQuery {
    /// The filters, the position to continue from and the page size this
    /// query asks for: the partner's search and the operator's.
    pub(crate) fn search(
        self,
        api: &ApiConfig,
    ) -> Result<(DeliveryFilter, Option<Position>, u32), Problem> {
        if let Some(s) = &self.state
            && !STATES.contains(&s.as_str())
        {
            return Err(Problem::not_one_of("state", s, &STATES));
        }
        let limit = page::limit(self.limit, api.page_size_default, api.page_size_max)?;
        let before = self
            .after
            .as_deref()
            .map(page::decode_position)
            .transpose()?;
        let filter = DeliveryFilter {
            since: body::optional_time("since", self.since.as_deref())?,
            until: body::optional_time("until", self.until.as_deref())?,
            endpoint_id: self.endpoint_id,
            event_id: self.event_id,
            event_type: self.event_type,
            state: self.state,
        };
        Ok((filter, before, limit))
    }
}

/// Search deliveries, newest first.
#[utoipa::path(tag = "deliveries", params(DeliveryQuery), security(("partner_key" = [])),
    responses((status = 200, description = "A page of deliveries, newest first; `next_cursor` continues it", body = Page<DeliveryOut>), Errors))]
#[get("/v1/deliveries")]
pub async fn list_deliveries(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let q: DeliveryQuery = body::query(req.query_string())?;
    let (filter, before, limit) = q.search(&state.shared.config.api)?;
    let rows = for_partner(&state.shared.db, &partner)
        .deliveries(&filter, before.as_ref(), limit)
        .await?;
    Ok(HttpResponse::Ok().json(Page::of(
        rows,
        limit,
        |d| (d.created_at, d.id.as_str()),
        DeliveryOut::from,
    )))
}

/// Read a delivery with all its attempts.
#[utoipa::path(tag = "deliveries", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The delivery with all its attempts", body = DeliveryDetail), Errors))]
#[get("/v1/deliveries/{id}")]
pub async fn get_delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let scoped = for_partner(&state.shared.db, &partner);
    let (d, attempts) = scoped
        .delivery_with_attempts(&id)
        .await?
        .ok_or_else(|| Problem::not_found("no such delivery"))?;
    Ok(HttpResponse::Ok().json(DeliveryDetail {
        delivery: d.into(),
        attempts: attempts.into_iter().map(AttemptOut::from).collect(),
    }))
}

/// Send this delivery again now, as a manual attempt with the original event id.
#[utoipa::path(tag = "deliveries", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 202, description = "Queued: the replay, and when it goes (`sends`)", body = ReplayQueued), Errors))]
#[post("/v1/deliveries/{id}/replay")]
pub async fn replay_delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let queued = queue_replay(&state, &partner, &id).await?;
    Ok(HttpResponse::Accepted().json(queued))
}

/// Queues a manual attempt of one of `partner`'s deliveries and tells the
/// fanout: what the partner's replay does, and the operator's.
pub(crate) async fn queue_replay(
    state: &AppState,
    partner: &str,
    id: &str,
) -> Result<ReplayQueued, Problem> {
    let scoped = for_partner(&state.shared.db, partner);
    if let Some(d) = scoped.delivery(id).await?
        && d.state == "skipped"
    {
        return Err(Problem::conflict(
            "this delivery was skipped: the event has no valid rendering at the endpoint's pinned version; \
             pin another version or publish the event with a rendition for it",
        ));
    }
    let (replay_id, d) = scoped
        .replay(id, state.shared.clock.now_ms())
        .await?
        .ok_or_else(|| Problem::not_found("no such delivery"))?;
    state
        .engine
        .fanout
        .do_send(EndpointChanged(d.endpoint_id.clone()));
    let active = scoped
        .endpoint(&d.endpoint_id)
        .await?
        .is_some_and(|e| e.status == EndpointStatus::Active);
    let (sends, waiting_for) = if active {
        (ReplaySends::Now, None)
    } else {
        let enable = format!("POST /v1/endpoints/{}/enable", d.endpoint_id);
        let why =
            format!("the endpoint is disabled: the replay goes when it is enabled ({enable})");
        (ReplaySends::WhenEnabled, Some(why))
    };
    Ok(ReplayQueued {
        replay_id,
        delivery_id: d.id,
        event_id: d.event_id,
        endpoint_id: d.endpoint_id,
        sends,
        waiting_for,
    })
}
