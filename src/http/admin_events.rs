//! `/v1/admin/events`: every partner's published events, newest first and
//! filtered; with `state=rejected`, the events the fanout refused because
//! they fail the catalog (written with plain SQL around the API), with the
//! reason, newest first (they are never delivered); and any partner's
//! event with its deliveries. An operator key only.

use actix_web::{HttpRequest, HttpResponse, get, web};
use sea_orm::DatabaseConnection;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    AppState, auth, body, page,
    partner::{
        events::{EventDetail, EventOut},
        time,
    },
    problem::{Errors, Problem},
};
use crate::{
    config::ApiConfig,
    domain::event::format_time,
    store::{
        self,
        admin::{EventSearch, PublishedEvent},
        scoped::for_partner,
    },
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// `rejected`: the events the fanout refused (only `limit` applies
    /// then). Absent: published events.
    pub state: Option<String>,
    /// Only this partner's events.
    pub partner_id: Option<String>,
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub event_type: Option<String>,
    /// RFC 3339: received at or after.
    pub since: Option<String>,
    /// RFC 3339: received before.
    pub until: Option<String>,
    /// The `next_cursor` of the previous page.
    pub after: Option<String>,
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

/// A published event of any partner.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminEvent {
    pub partner_id: String,
    /// When hookd received it.
    pub received_at: String,
    pub published_at: Option<String>,
    /// The event exactly as its deliveries carry it.
    pub event: EventOut,
}

impl From<PublishedEvent> for AdminEvent {
    fn from(p: PublishedEvent) -> Self {
        AdminEvent {
            partner_id: p.event.partner_id.clone(),
            received_at: time(p.created_at),
            published_at: p.published_at.map(time),
            event: EventOut::from(&p.event),
        }
    }
}

/// One item of the list: a published event, or with `state=rejected` a rejected one.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum AdminEventItem {
    Published(AdminEvent),
    Rejected(RejectedEvent),
}

/// A page of events.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminEvents {
    pub data: Vec<AdminEventItem>,
    /// Pass as `after` for the next page; null when there is none (always
    /// null for rejected events, which are listed in one page).
    pub next_cursor: Option<String>,
}

/// Any partner's event with its deliveries.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminEventDetail {
    pub partner_id: String,
    #[serde(flatten)]
    pub detail: EventDetail,
}

/// Every partner's published events, newest first; with `state=rejected`,
/// the events the fanout rejected (they fail the catalog), newest first.
#[utoipa::path(tag = "admin", params(EventsQuery), security(("operator_key" = [])),
    responses((status = 200, description = "A page of every partner's events (or the rejected ones), newest first", body = AdminEvents), Errors))]
#[get("/v1/admin/events")]
pub async fn list_events(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: EventsQuery = body::query(req.query_string())?;
    let answer = read(&state.shared.db, &state.shared.config.api, q).await?;
    Ok(HttpResponse::Ok().json(answer))
}

/// The page of events `q` asks for: the API's answer, and the command
/// line's (`hookd event list`).
pub async fn read(
    db: &DatabaseConnection,
    api: &ApiConfig,
    q: EventsQuery,
) -> Result<AdminEvents, Problem> {
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    match q.state.as_deref() {
        None => published(db, q, limit).await,
        Some("rejected") => rejected(db, q, limit).await,
        Some(other) => Err(Problem::out_of_range(
            "state",
            format!(
                "state `{other}` is not listed here; use state=rejected, or no state for published events"
            ),
        )),
    }
}

async fn published(
    db: &DatabaseConnection,
    q: EventsQuery,
    limit: u32,
) -> Result<AdminEvents, Problem> {
    let before = q.after.as_deref().map(page::decode_position).transpose()?;
    let search = EventSearch {
        since: body::optional_time("since", q.since.as_deref())?,
        until: body::optional_time("until", q.until.as_deref())?,
        partner_id: q.partner_id,
        event_type: q.event_type,
    };
    let rows = store::admin::events(db, &search, before.as_ref(), limit).await?;
    let page = page::Page::of(
        rows,
        limit,
        |p| (p.created_at, p.event.id.as_str()),
        AdminEvent::from,
    );
    Ok(AdminEvents {
        data: page
            .data
            .into_iter()
            .map(AdminEventItem::Published)
            .collect(),
        next_cursor: page.next_cursor,
    })
}

async fn rejected(
    db: &DatabaseConnection,
    q: EventsQuery,
    limit: u32,
) -> Result<AdminEvents, Problem> {
    let given = [
        ("partner_id", q.partner_id.is_some()),
        ("type", q.event_type.is_some()),
        ("since", q.since.is_some()),
        ("until", q.until.is_some()),
        ("after", q.after.is_some()),
    ];
    if let Some((filter, _)) = given.into_iter().find(|(_, given)| *given) {
        return Err(Problem::invalid(
            filter,
            format!(
                "state=rejected takes only limit; {filter} (like every filter and cursor) applies to published events"
            ),
        ));
    }
    let rows = store::outbox::rejected(db, u64::from(limit)).await?;
    Ok(AdminEvents {
        data: rows
            .into_iter()
            .map(|m| {
                AdminEventItem::Rejected(RejectedEvent {
                    event_id: m.event_id,
                    event_type: m.r#type,
                    partner_id: m.partner_id,
                    schema_version: m.schema_version,
                    created_at: format_time(m.created_at),
                    rejected_at: format_time(m.published_at.unwrap_or(m.created_at)),
                    reason: m.rejected_reason.unwrap_or_default(),
                })
            })
            .collect(),
        next_cursor: None,
    })
}

/// Any partner's event (published, waiting or rejected) with its deliveries.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 200, description = "The event with its deliveries", body = AdminEventDetail), Errors))]
#[get("/v1/admin/events/{id}")]
pub async fn admin_get_event(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let not_found = || Problem::not_found("no such event");
    let partner_id = store::admin::event_owner(&state.shared.db, &id)
        .await?
        .ok_or_else(not_found)?;
    let (event, deliveries) = for_partner(&state.shared.db, &partner_id)
        .event(&id)
        .await?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Ok().json(AdminEventDetail {
        partner_id,
        detail: EventDetail {
            event: EventOut::from(&event),
            deliveries: deliveries.into_iter().map(Into::into).collect(),
        },
    }))
}
