//! The dashboard's pages: each handler checks the session, reads what its
//! page shows (through the store, and the dashboard's own [`reads`]) and
//! renders it. Unknown ids are a 404 page; a signed-out browser is sent to
//! sign in.
//!
//! [`reads`]: super::reads

use std::collections::HashMap;

use actix_web::{HttpRequest, HttpResponse, http::StatusCode, web};
use sea_orm::DatabaseConnection;
use serde::Deserialize;

use super::{
    PageError, form_time, no_such_page, operator, pages,
    paging::{self, Cursor, Keyset, Order},
    query,
    reads::{
        attempts::{self, Of},
        deliveries, events,
        totals::{Totals, totals},
    },
};
use crate::{
    delivery::report::ActorReport,
    http::{
        AppState, admin_endpoints, incidents::IncidentOut, observe,
        partner::ordering::HeldSubjects, problem::Problem,
    },
    store::{
        self, StoreError,
        admin::DeliverySearch,
        audit::{self, AuditFilter, Recorded},
        charts::Buckets,
        endpoint_views::{self, Choice, Filter, Sort, StatusFilter},
        samples,
        scoped::{DeliveryFilter, DeliveryRow, for_partner},
    },
    web::{chrome::html, csrf},
};

const MINUTE_MS: i64 = 60_000;

/// How many endpoints a page of the endpoints list shows.
const ENDPOINTS_PER_PAGE: u32 = 50;

/// How many deliveries a page of search results shows.
const DELIVERIES_PER_PAGE: u32 = 50;

/// How many attempts a page of an endpoint's or a delivery's shows.
const ATTEMPTS_PER_PAGE: u32 = 50;

/// How many held subjects an endpoint's page lists.
const HELD_LISTED: u32 = 100;

/// How many rows the overview's endpoint table shows.
const TOP_ENDPOINTS: u32 = 25;

/// How far back the attempt averages look.
const MEASURED_OVER_MS: i64 = 60 * MINUTE_MS;

/// The cards' numbers, of `partner` when given.
async fn cards(state: &AppState, partner: Option<&str>) -> Result<Totals, StoreError> {
    let shared = &state.shared;
    totals(&shared.db, partner, shared.config.delivery.schedule.len()).await
}

async fn window(
    db: &DatabaseConnection,
    buckets: Buckets,
    samples: &[samples::Sample],
) -> Result<pages::overview::Window, StoreError> {
    Ok(pages::overview::Window {
        buckets,
        attempts: store::charts::attempts(db, buckets).await?,
        latencies: store::charts::latencies(db, buckets).await?,
        samples: samples.to_vec(),
    })
}

pub async fn overview(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    operator(&req, &state).await?;
    #[derive(Default, Deserialize)]
    #[serde(default)]
    struct Q {
        partner_id: String,
    }
    let q: Q = query(&req)?;
    let partner = Some(q.partner_id.trim()).filter(|p| !p.is_empty());
    let actors = observe::overview(&state, partner, TOP_ENDPOINTS).await?;
    let shared = &state.shared;
    let (db, now) = (&shared.db, shared.clock.now_ms());
    let unknown_partner = match partner {
        Some(p) => store::partners::find(db, p).await?.is_none(),
        None => false,
    };
    let totals = cards(&state, partner).await?;
    let listed: Vec<String> = actors.data.iter().map(|e| e.endpoint_id.clone()).collect();
    let measured = attempts::measured(db, &listed, now - MEASURED_OVER_MS).await?;
    let (hour, day) = (
        Buckets::ending_at(now, MINUTE_MS, 60),
        Buckets::ending_at(now, 15 * MINUTE_MS, 96),
    );
    let sampled = samples::since(db, day.start_ms).await?;
    let periods = pages::overview::Periods {
        hour: window(db, hour, &sampled).await?,
        day: window(db, day, &sampled).await?,
    };
    let incidents: Vec<IncidentOut> = store::incidents::list(db, partner, true, 100)
        .await?
        .into_iter()
        .map(IncidentOut::from)
        .collect();
    let view = pages::overview::OverviewView {
        incidents: &incidents,
        actors: &actors,
        totals: &totals,
        periods: &periods,
        partner,
        unknown_partner,
        measured: &measured,
        now_ms: now,
    };
    Ok(html(StatusCode::OK, pages::overview::overview(&view)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct EndpointsQuery {
    partner_id: String,
    status: String,
    circuit: String,
    backlog: String,
    sort: String,
    page: String,
}

pub async fn endpoints(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    operator(&req, &state).await?;
    let q: EndpointsQuery = query(&req)?;
    let status = match q.status.as_str() {
        "" => None,
        s => Some(StatusFilter::parse(s).ok_or_else(|| {
            Problem::invalid_query("status must be one of active, failing, paused, disabled")
        })?),
    };
    let sort = match q.sort.as_str() {
        "" => Sort::default(),
        s => Sort::parse(s).ok_or_else(|| {
            Problem::invalid_query("sort must be one of failing_since, backlog, partner")
        })?,
    };
    let number = paging::read_number(&q.page)?;
    let filter = Filter {
        partner_id: Some(q.partner_id.trim().to_string()).filter(|p| !p.is_empty()),
        status,
        open_circuit: q.circuit == "open",
        with_backlog: !q.backlog.is_empty(),
    };
    let db = &state.shared.db;
    // The store's list reads from the top; this reads through the page
    // asked for and one row past it (at most MAX_PAGE pages).
    let through = number * ENDPOINTS_PER_PAGE + 1;
    let listed = endpoint_views::list(db, &filter, sort, through).await?;
    let (rows, more) = paging::numbered(listed, number, ENDPOINTS_PER_PAGE);
    let totals = cards(&state, filter.partner_id.as_deref()).await?;
    let actors = actor_reports(&state).await?;
    let view = pages::endpoints::EndpointsView {
        rows: &rows,
        actors: &actors,
        filter: &filter,
        sort,
        totals: &totals,
        page: (number, ENDPOINTS_PER_PAGE),
        more,
        now_ms: state.shared.clock.now_ms(),
    };
    Ok(html(StatusCode::OK, pages::endpoints::endpoints(&view)))
}

/// The audit entries on one object, newest first.
async fn actions_on(db: &DatabaseConnection, target: &str) -> Result<Vec<Recorded>, StoreError> {
    let filter = AuditFilter {
        target: Some(target.to_string()),
        ..AuditFilter::default()
    };
    audit::list(db, &filter, None, 20).await
}

/// What a page with action forms needs: a signed-in operator, the CSRF
/// token of that session and the confirmation the query asks for; and
/// where its table of attempts starts.
pub(super) async fn forms(
    req: &HttpRequest,
    state: &AppState,
) -> Result<(pages::Forms, Cursor), PageError> {
    let op = operator(req, state).await?;
    let mut forms: pages::Forms = query(req)?;
    forms.csrf = csrf::token(state.shared.secrets.session_key(), &op.session_id);
    #[derive(Default, Deserialize)]
    #[serde(default)]
    struct Q {
        before: String,
        after: String,
    }
    let q: Q = query(req)?;
    Ok((forms, Cursor::read(&q.before, &q.after)?))
}

pub async fn endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (forms, cursor) = forms(&req, &state).await?;
    let page = endpoint_page(&state, &id, &forms, &cursor, None).await?;
    Ok(html(StatusCode::OK, page))
}

/// The endpoint page of `id` with `forms`, its attempts from `cursor`, and
/// the key a rotation just made (`rotated`), which only the page answering
/// the rotation shows.
pub async fn endpoint_page(
    state: &AppState,
    id: &str,
    forms: &pages::Forms,
    cursor: &Cursor,
    rotated: Option<&pages::secrets::Rotated>,
) -> Result<maud::Markup, PageError> {
    let db = &state.shared.db;
    let now = state.shared.clock.now_ms();
    let e = endpoint_views::one(db, id)
        .await?
        .ok_or_else(|| Problem::not_found("there is no endpoint with this id"))?;
    let of = Of::Endpoint(&e.id);
    let attempts = attempts::page(db, of, Order::NewestFirst, cursor, ATTEMPTS_PER_PAGE).await?;
    let measured = attempts::measured(db, std::slice::from_ref(&e.id), now - MEASURED_OVER_MS)
        .await?
        .remove(&e.id);
    let notices = endpoint_views::notices(db, &e.partner_id, &e.id, 20).await?;
    let audit = actions_on(db, &e.id).await?;
    let credentials = store::receiver_auth::shown(db, &e.id).await?;
    let signing = store::endpoints::signing(db, &e.id, now).await?;
    let routing = routing(state, &e.id).await?;
    let actor = actor_reports(state).await?.remove(&e.id);
    // Only a delivery of this endpoint is shown as its test delivery.
    let test = match forms.test.as_deref() {
        Some(d) => for_partner(db, &e.partner_id)
            .delivery(d)
            .await?
            .filter(|d| d.endpoint_id == e.id),
        None => None,
    };
    let view = pages::endpoint::EndpointView {
        endpoint: &e,
        actor: actor.as_ref(),
        attempts: &attempts,
        measured: measured.as_ref(),
        notices: &notices,
        audit: &audit,
        credentials: &credentials,
        signing: &signing,
        routing: &routing,
        now_ms: now,
        forms,
        test: test.as_ref(),
        rotated,
    };
    Ok(pages::endpoint::endpoint(&view))
}

/// The reports of the endpoint actors running in this instance, by endpoint.
async fn actor_reports(state: &AppState) -> Result<HashMap<String, ActorReport>, Problem> {
    Ok(observe::reports(state)
        .await?
        .into_iter()
        .map(|r| (r.endpoint_id.clone(), r))
        .collect())
}

/// An endpoint's ordering, filter and held subjects.
async fn routing(state: &AppState, id: &str) -> Result<pages::routing::Routing, PageError> {
    let e = admin_endpoints::find(state, id).await?;
    let held = store::ordering::held(&state.shared.db, &e.id, HELD_LISTED).await?;
    Ok(pages::routing::Routing {
        filter: e.filter.as_ref().map(|f| f.to_json()),
        held: HeldSubjects::of(e, held),
    })
}

fn no_such_delivery() -> Problem {
    Problem::not_found("there is no delivery with this id")
}

pub async fn delivery(
    id: web::Path<String>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (forms, cursor) = forms(&req, &state).await?;
    let db = &state.shared.db;
    let partner_id = store::admin::delivery_owner(db, &id)
        .await?
        .ok_or_else(no_such_delivery)?;
    let d = for_partner(db, &partner_id)
        .delivery(&id)
        .await?
        .ok_or_else(no_such_delivery)?;
    let of = Of::Delivery(&d.id);
    let attempts = attempts::page(db, of, Order::OldestFirst, &cursor, ATTEMPTS_PER_PAGE).await?;
    let audit = actions_on(db, &d.id).await?;
    let view = pages::delivery::DeliveryView {
        partner_id: &partner_id,
        delivery: &d,
        attempts: &attempts,
        audit: &audit,
        forms: &forms,
        now_ms: state.shared.clock.now_ms(),
    };
    Ok(html(StatusCode::OK, pages::delivery::delivery(&view)))
}

pub async fn event(
    id: web::Path<String>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    operator(&req, &state).await?;
    let db = &state.shared.db;
    let no_such_event = || Problem::not_found("there is no event with this id");
    // The admin API's read: the event's owner, then the event with its
    // deliveries as the Partner API gives them.
    let partner_id = store::admin::event_owner(db, &id)
        .await?
        .ok_or_else(no_such_event)?;
    let (event, deliveries) = for_partner(db, &partner_id)
        .event(&id)
        .await?
        .ok_or_else(no_such_event)?;
    let record = events::record(db, &id).await?.ok_or_else(no_such_event)?;
    let versions = events::versions(db, &id).await?;
    let view = pages::event::EventView {
        partner_id: &partner_id,
        event: &event,
        record: &record,
        deliveries: &deliveries,
        versions: &versions,
        now_ms: state.shared.clock.now_ms(),
    };
    Ok(html(StatusCode::OK, pages::event::event(&view)))
}

fn filled(s: &str) -> Option<String> {
    Some(s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Runs a search: a page of (partner id, delivery), newest first.
async fn find(
    state: &AppState,
    f: &pages::search::SearchForm,
) -> Result<Keyset<(String, DeliveryRow)>, Problem> {
    let db = &state.shared.db;
    let cursor = Cursor::read(&f.before, &f.after)?;
    if let Some(id) = filled(&f.delivery_id) {
        let mut rows = Vec::new();
        if let Some(partner) = store::admin::delivery_owner(db, &id).await? {
            let row = for_partner(db, &partner).delivery(&id).await?;
            rows.extend(row.map(|d| (partner, d)));
        }
        return Ok(Keyset::one_page(rows, Order::NewestFirst));
    }
    let search = DeliverySearch {
        filter: DeliveryFilter {
            endpoint_id: filled(&f.endpoint_id),
            event_id: filled(&f.event_id),
            event_type: None,
            state: filled(&f.state),
            since: form_time("since", &f.since)?,
            until: form_time("until", &f.until)?,
        },
        partner_id: filled(&f.partner_id),
        ..DeliverySearch::default()
    };
    Ok(deliveries::page(db, &search, &cursor, DELIVERIES_PER_PAGE).await?)
}

pub async fn search(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    operator(&req, &state).await?;
    let f: pages::search::SearchForm = query(&req)?;
    let now = state.shared.clock.now_ms();
    match find(&state, &f).await {
        Ok(found) => Ok(html(
            StatusCode::OK,
            pages::search::search(&f, &found, None, now),
        )),
        // A search that cannot be read is shown with the form to fix it.
        Err(p) if p.status < 500 => {
            let none = Keyset::one_page(Vec::new(), Order::NewestFirst);
            Ok(html(
                StatusCode::BAD_REQUEST,
                pages::search::search(&f, &none, Some(&p.detail), now),
            ))
        }
        Err(p) => Err(p.into()),
    }
}

/// A path under `/dashboard` that names no page: a 404 page when signed in.
pub async fn unknown(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    operator(&req, &state).await?;
    Err(no_such_page())
}
