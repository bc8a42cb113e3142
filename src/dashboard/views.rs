//! The dashboard's pages: each handler checks the session, reads what its
//! page shows through the store, and renders it. Unknown ids are a 404
//! page; a signed-out browser is sent to sign in.

use actix_web::{HttpRequest, HttpResponse, http::StatusCode, web};
use sea_orm::DatabaseConnection;
use serde::Deserialize;

use super::{PageError, form_time, no_such_page, operator, pages, query};
use crate::{
    http::{AppState, observe, page, problem::Problem},
    store::{
        self, StoreError,
        admin::DeliverySearch,
        audit::{self, AuditFilter, Recorded},
        backlog,
        charts::Buckets,
        endpoint_views::{self, Choice, Filter, Sort, StatusFilter},
        samples,
        scoped::{DeliveryFilter, DeliveryRow, for_partner},
    },
    web::{chrome::html, csrf},
};

const MINUTE_MS: i64 = 60_000;

/// How many endpoints the endpoints page lists at most.
const ENDPOINTS_SHOWN: u32 = 500;

/// How many deliveries a search page lists.
const DELIVERIES_SHOWN: u32 = 100;

/// How many rows the overview's endpoint table shows.
const TOP_ENDPOINTS: u32 = 25;

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
    let (_, oldest) = backlog::unpublished(db).await?;
    let totals = pages::overview::Totals {
        endpoints: backlog::endpoints_by_status(db).await?,
        waiting: backlog::waiting(db).await?,
        stuck: backlog::stuck(db, shared.config.delivery.schedule.len()).await?,
        outbox_age_ms: oldest.map(|t| (now - t).max(0)),
    };
    let (hour, day) = (
        Buckets::ending_at(now, MINUTE_MS, 60),
        Buckets::ending_at(now, 15 * MINUTE_MS, 96),
    );
    let sampled = samples::since(db, day.start_ms).await?;
    let periods = pages::overview::Periods {
        hour: window(db, hour, &sampled).await?,
        day: window(db, day, &sampled).await?,
    };
    Ok(html(
        StatusCode::OK,
        pages::overview::overview(&actors, &totals, &periods, partner),
    ))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct EndpointsQuery {
    partner_id: String,
    status: String,
    circuit: String,
    backlog: String,
    sort: String,
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
    let filter = Filter {
        partner_id: Some(q.partner_id.trim().to_string()).filter(|p| !p.is_empty()),
        status,
        open_circuit: q.circuit == "open",
        with_backlog: !q.backlog.is_empty(),
    };
    let db = &state.shared.db;
    let rows = endpoint_views::list(db, &filter, sort, ENDPOINTS_SHOWN).await?;
    let now = state.shared.clock.now_ms();
    Ok(html(
        StatusCode::OK,
        pages::endpoints::endpoints(&rows, &filter, sort, ENDPOINTS_SHOWN, now),
    ))
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
/// token of that session and the confirmation the query asks for.
async fn forms(req: &HttpRequest, state: &AppState) -> Result<pages::Forms, PageError> {
    let op = operator(req, state).await?;
    let mut forms: pages::Forms = query(req)?;
    forms.csrf = csrf::token(state.shared.secrets.session_key(), &op.session_id);
    Ok(forms)
}

pub async fn endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let forms = forms(&req, &state).await?;
    let db = &state.shared.db;
    let e = endpoint_views::one(db, &id)
        .await?
        .ok_or_else(|| Problem::not_found("there is no endpoint with this id"))?;
    let attempts = endpoint_views::recent_attempts(db, &e.id, 50).await?;
    let notices = endpoint_views::notices(db, &e.partner_id, &e.id, 20).await?;
    let audit = actions_on(db, &e.id).await?;
    let actor = observe::reports(&state)
        .await?
        .into_iter()
        .find(|r| r.endpoint_id == e.id);
    let view = pages::endpoint::EndpointView {
        endpoint: &e,
        actor: actor.as_ref(),
        attempts: &attempts,
        notices: &notices,
        audit: &audit,
        now_ms: state.shared.clock.now_ms(),
        forms: &forms,
    };
    Ok(html(StatusCode::OK, pages::endpoint::endpoint(&view)))
}

fn no_such_delivery() -> Problem {
    Problem::not_found("there is no delivery with this id")
}

pub async fn delivery(
    id: web::Path<String>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let forms = forms(&req, &state).await?;
    let db = &state.shared.db;
    let partner_id = store::admin::delivery_owner(db, &id)
        .await?
        .ok_or_else(no_such_delivery)?;
    let (d, attempts) = for_partner(db, &partner_id)
        .delivery_with_attempts(&id)
        .await?
        .ok_or_else(no_such_delivery)?;
    let audit = actions_on(db, &d.id).await?;
    let view = pages::delivery::DeliveryView {
        partner_id: &partner_id,
        delivery: &d,
        attempts: &attempts,
        audit: &audit,
        forms: &forms,
    };
    Ok(html(StatusCode::OK, pages::delivery::delivery(&view)))
}

fn filled(s: &str) -> Option<String> {
    Some(s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Runs a search: (partner id, delivery) newest first, and the cursor of
/// the next page when this one is full.
async fn find(
    state: &AppState,
    f: &pages::search::SearchForm,
) -> Result<(Vec<(String, DeliveryRow)>, Option<String>), Problem> {
    let db = &state.shared.db;
    if let Some(id) = filled(&f.delivery_id) {
        let Some(partner) = store::admin::delivery_owner(db, &id).await? else {
            return Ok((Vec::new(), None));
        };
        let row = for_partner(db, &partner).delivery(&id).await?;
        return Ok((
            row.into_iter().map(|d| (partner.clone(), d)).collect(),
            None,
        ));
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
    let before = filled(&f.before)
        .map(|c| page::decode_position(&c))
        .transpose()?;
    let rows = store::admin::deliveries(db, &search, before.as_ref(), DELIVERIES_SHOWN).await?;
    let next = (rows.len() == DELIVERIES_SHOWN as usize)
        .then(|| rows.last())
        .flatten()
        .map(|(_, d)| page::encode_position(d.created_at, &d.id));
    Ok((rows, next))
}

pub async fn search(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    operator(&req, &state).await?;
    let f: pages::search::SearchForm = query(&req)?;
    match find(&state, &f).await {
        Ok((rows, next)) => Ok(html(
            StatusCode::OK,
            pages::search::search(&f, &rows, None, next.as_deref()),
        )),
        // A search that cannot be read is shown with the form to fix it.
        Err(p) if p.status < 500 => Ok(html(
            StatusCode::BAD_REQUEST,
            pages::search::search(&f, &[], Some(&p.detail), None),
        )),
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
