//! Ordered subjects through the Partner API: which subjects of an endpoint
//! are held up behind their heads and why
//! (`GET /v1/endpoints/{id}/held-subjects`), and skipping a dead head that
//! holds its subject (`POST /v1/deliveries/{id}/skip`).

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use utoipa::ToSchema;

use super::{deliveries::DeliveryOut, time};
use crate::{
    delivery::messages::EndpointChanged,
    http::{
        AppState, auth,
        problem::{Errors, Problem},
    },
    store::{
        endpoints::Endpoint, ordering::HeldSubject, scoped::for_partner, scoped_ordering::Skipped,
    },
};

/// The most subjects one answer lists.
const MAX_LISTED: u32 = 500;

/// A subject, as the envelope names it.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubjectRef {
    #[serde(rename = "type")]
    pub subject_type: String,
    pub id: String,
}

/// The delivery a held subject waits for.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeadOut {
    pub delivery_id: String,
    pub event_id: String,
    pub event_type: String,
    pub state: String,
    pub attempt_count: i32,
    /// When a retrying head is next attempted.
    pub next_attempt_at: Option<String>,
    pub last_error_category: Option<String>,
}

/// One subject held up behind its head.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeldSubjectOut {
    pub subject: SubjectRef,
    /// `dead_head` (it waits until the head is replayed successfully or
    /// skipped), `retrying` (the head failed and is retried on its
    /// schedule), `paused` (the endpoint is not active) or `sending`.
    pub held_by: String,
    /// What it waits for, in words, with what to do.
    pub detail: String,
    pub head: HeadOut,
    /// Deliveries of the subject waiting behind the head.
    pub waiting: i64,
    /// When the head last changed.
    pub since: String,
}

/// An endpoint's ordering and the subjects held up behind their heads.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeldSubjects {
    pub endpoint_id: String,
    /// `none` or `subject`.
    pub ordering: String,
    /// `skip` or `hold`.
    pub ordering_on_dead: String,
    /// Oldest change first, at most 500.
    pub data: Vec<HeldSubjectOut>,
}

impl HeldSubjects {
    /// The answer for `endpoint` with its held subjects `held`.
    pub fn of(endpoint: Endpoint, held: Vec<HeldSubject>) -> HeldSubjects {
        HeldSubjects {
            endpoint_id: endpoint.id,
            ordering: endpoint.ordering.as_str().into(),
            ordering_on_dead: endpoint.on_dead.as_str().into(),
            data: held.into_iter().map(held_out).collect(),
        }
    }
}

/// Why a subject is held, as the API names it, and the words for it.
pub fn held_out(h: HeldSubject) -> HeldSubjectOut {
    let id = &h.delivery_id;
    let (held_by, detail) = match h.state.as_str() {
        "dead" => (
            "dead_head",
            format!(
                "its head died after {} attempts; replay it (POST /v1/deliveries/{id}/replay) \
                 or skip it (POST /v1/deliveries/{id}/skip) to let the subject move on",
                h.attempt_count
            ),
        ),
        "failed" => (
            "retrying",
            format!(
                "its head failed ({}) and is retried at {}",
                h.last_error_category.as_deref().unwrap_or("error"),
                time(h.next_attempt_at)
            ),
        ),
        "paused" => (
            "paused",
            "the endpoint is not active: enabling it resumes the head".to_string(),
        ),
        _ => ("sending", "its head is being delivered".to_string()),
    };
    HeldSubjectOut {
        subject: SubjectRef {
            subject_type: h.subject_type,
            id: h.subject_id,
        },
        held_by: held_by.into(),
        detail,
        head: HeadOut {
            next_attempt_at: (h.state == "failed").then(|| time(h.next_attempt_at)),
            delivery_id: h.delivery_id,
            event_id: h.event_id,
            event_type: h.event_type,
            state: h.state,
            attempt_count: h.attempt_count,
            last_error_category: h.last_error_category,
        },
        waiting: h.waiting,
        since: time(h.since),
    }
}

/// The subjects of an ordered endpoint that are held up behind their heads,
/// and why: a dead head that holds (replay or skip it), a retrying head, a
/// paused endpoint.
#[utoipa::path(tag = "endpoints", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "The held subjects", body = HeldSubjects), Errors))]
#[get("/v1/endpoints/{id}/held-subjects")]
pub async fn held_subjects(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let scoped = for_partner(&state.shared.db, &partner);
    let endpoint = scoped
        .endpoint(&id)
        .await?
        .ok_or_else(|| Problem::not_found("no such endpoint"))?;
    let held = scoped
        .held_subjects(&id, MAX_LISTED)
        .await?
        .unwrap_or_default();
    Ok(HttpResponse::Ok().json(HeldSubjects::of(endpoint, held)))
}

/// Let a dead delivery that holds its subject go: the subject's next
/// delivery is sent; this one stays dead, and can still be replayed (out of
/// order, marked `hookd-replay: out-of-band`).
#[utoipa::path(tag = "deliveries", params(("id" = String, Path)), security(("partner_key" = [])),
    responses((status = 200, description = "Skipped: the delivery, still dead", body = DeliveryOut), Errors))]
#[post("/v1/deliveries/{id}/skip")]
pub async fn skip_delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    let skipped = skip(&state, &partner, &id).await?;
    Ok(HttpResponse::Ok().json(skipped))
}

/// Skips `partner`'s delivery `id` and wakes its endpoint: what the
/// partner's skip does, and the operator's.
pub(crate) async fn skip(
    state: &AppState,
    partner: &str,
    id: &str,
) -> Result<DeliveryOut, Problem> {
    let now = state.shared.clock.now_ms();
    let skipped = skip_in(&state.shared.db, partner, id, now).await?;
    state
        .engine
        .fanout
        .do_send(EndpointChanged(skipped.endpoint_id.clone()));
    Ok(skipped)
}

/// Lets `partner`'s dead delivery `id` stop holding its subject, or says
/// why it cannot; the caller wakes the endpoint (the API's skip, and the
/// command line's).
pub(crate) async fn skip_in(
    db: &DatabaseConnection,
    partner: &str,
    id: &str,
    now_ms: i64,
) -> Result<DeliveryOut, Problem> {
    match for_partner(db, partner).skip_head(id, now_ms).await? {
        None => Err(Problem::not_found("no such delivery")),
        Some(Skipped::NotHolding(d)) => Err(Problem::conflict(format!(
            "this delivery holds no subject: it is {}; only a dead delivery of an endpoint \
             with ordering_on_dead `hold` holds its subject",
            d.state
        ))),
        Some(Skipped::Released(d)) => Ok(d.into()),
    }
}
