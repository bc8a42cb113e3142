//! The portal's pages to read: the partner's endpoints, one endpoint (with
//! its held subjects), its deliveries and their attempts, the event feed,
//! the notification channel.
//! Every read goes through the partner's scoped store: another partner's
//! object is a 404 page like a missing one.

use actix_web::{HttpRequest, HttpResponse, http::StatusCode, web};

use super::{Signed, enter, form::Draft, pages};
use crate::{
    http::{
        AppState, body, page,
        partner::{
            deliveries::{AttemptOut, DeliveryOut, DeliveryQuery},
            endpoints::EndpointOut,
            events::EventOut,
            ordering::{HeldSubjectOut, held_out},
            settings,
        },
        problem::Problem,
    },
    store::{scoped::DeliveryFilter, scoped::for_partner},
};

/// The most held subjects the endpoint page lists.
const HELD_LISTED: u32 = 100;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/portal", web::get().to(home))
        .route("/portal/endpoints/{id}", web::get().to(endpoint))
        .route("/portal/deliveries", web::get().to(deliveries))
        .route("/portal/deliveries/{id}", web::get().to(delivery))
        .route("/portal/events", web::get().to(events))
        .route("/portal/settings", web::get().to(settings_page));
}

/// A problem as a page: its title and detail, at its status.
pub fn problem_page(p: &Problem) -> HttpResponse {
    let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::BAD_REQUEST);
    let text = match &p.field {
        Some(f) => format!("{} ({f})", p.detail),
        None => p.detail.clone(),
    };
    pages::message(status, p.title, &text)
}

/// Runs `view` for a signed-in request; a problem becomes its page.
pub(super) async fn run<F, Fut>(
    req: &HttpRequest,
    state: &AppState,
    view: F,
) -> Result<HttpResponse, Problem>
where
    F: FnOnce(Signed) -> Fut,
    Fut: std::future::Future<Output = Result<HttpResponse, Problem>>,
{
    let s = match enter(req, state).await? {
        Ok(s) => s,
        Err(page) => return Ok(page),
    };
    Ok(match view(s).await {
        Ok(page) => page,
        Err(p) if p.status >= 500 => return Err(p),
        Err(p) => problem_page(&p),
    })
}

async fn home(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        let scoped = for_partner(&state.shared.db, &s.partner_id);
        let list: Vec<EndpointOut> = scoped
            .endpoints(None, 500)
            .await?
            .into_iter()
            .map(EndpointOut::from)
            .collect();
        let settings = settings::read(state, &s.partner_id).await?;
        Ok(pages::endpoints(&list, &settings, &s.csrf))
    })
    .await
}

/// The endpoint page of `id`, with `shown` above it (a new secret, a notice).
pub async fn endpoint_page(
    state: &AppState,
    s: &Signed,
    id: &str,
    shown: maud::Markup,
) -> Result<HttpResponse, Problem> {
    endpoint_page_with(state, s, id, shown, &Draft::default()).await
}

/// The endpoint page of `id` with a form shown again as `draft` has it.
pub async fn endpoint_page_with(
    state: &AppState,
    s: &Signed,
    id: &str,
    shown: maud::Markup,
    draft: &Draft,
) -> Result<HttpResponse, Problem> {
    let scoped = for_partner(&state.shared.db, &s.partner_id);
    let e = scoped
        .endpoint(id)
        .await?
        .ok_or_else(|| Problem::not_found("no such endpoint"))?;
    let filter = DeliveryFilter {
        endpoint_id: Some(id.to_string()),
        ..Default::default()
    };
    let recent: Vec<DeliveryOut> = scoped
        .deliveries(&filter, None, 20)
        .await?
        .into_iter()
        .map(DeliveryOut::from)
        .collect();
    let auth = crate::http::partner::auth_ops::shown(state, &s.partner_id, id).await?;
    let held = scoped.held_subjects(id, HELD_LISTED).await?;
    let held: Vec<HeldSubjectOut> = held.into_iter().flatten().map(held_out).collect();
    let shown_page = pages::EndpointShown {
        endpoint: &EndpointOut::from(e),
        recent: &recent,
        auth: &auth,
        held: &held,
        draft,
    };
    Ok(pages::endpoint(&shown_page, &s.csrf, shown))
}

async fn endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        endpoint_page(state, &s, &id, maud::html! {}).await
    })
    .await
}

async fn deliveries(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        // Empty fields of the search form mean "any".
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(req.query_string())
            .map_err(|e| Problem::invalid_query(e.to_string()))?;
        let query = serde_urlencoded::to_string(
            pairs
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .collect::<Vec<_>>(),
        )
        .unwrap_or_default();
        let q: DeliveryQuery = body::query(&query)?;
        let (filter, before, limit) = q.search(&state.shared.config.api)?;
        let rows = for_partner(&state.shared.db, &s.partner_id)
            .deliveries(&filter, before.as_ref(), limit)
            .await?;
        let next = (rows.len() == limit as usize)
            .then(|| {
                rows.last()
                    .map(|d| page::encode_position(d.created_at, &d.id))
            })
            .flatten();
        let list: Vec<DeliveryOut> = rows.into_iter().map(DeliveryOut::from).collect();
        Ok(pages::deliveries(&list, next, &s.csrf))
    })
    .await
}

/// The delivery page of `id`, with `shown` above it.
pub async fn delivery_page(
    state: &AppState,
    s: &Signed,
    id: &str,
    shown: maud::Markup,
) -> Result<HttpResponse, Problem> {
    let (d, attempts) = for_partner(&state.shared.db, &s.partner_id)
        .delivery_with_attempts(id)
        .await?
        .ok_or_else(|| Problem::not_found("no such delivery"))?;
    let attempts: Vec<AttemptOut> = attempts.into_iter().map(AttemptOut::from).collect();
    Ok(pages::delivery(
        &DeliveryOut::from(d),
        &attempts,
        &s.csrf,
        shown,
    ))
}

async fn delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        delivery_page(state, &s, &id, maud::html! {}).await
    })
    .await
}

#[derive(serde::Deserialize)]
struct FeedQuery {
    after: Option<String>,
}

async fn events(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        let q: FeedQuery = body::query(req.query_string())?;
        let after = q
            .after
            .as_deref()
            .map(page::decode_seq)
            .transpose()?
            .unwrap_or(0);
        let rows = for_partner(&state.shared.db, &s.partner_id)
            .feed(after, 100, None)
            .await?;
        let last = rows.last().map_or(after, |(seq, _)| *seq);
        let list: Vec<serde_json::Value> = rows
            .iter()
            .filter_map(|(_, e)| serde_json::to_value(EventOut::from(e)).ok())
            .collect();
        Ok(pages::events(&list, &page::encode_seq(last), &s.csrf))
    })
    .await
}

async fn settings_page(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        let current = settings::read(state, &s.partner_id).await?;
        Ok(pages::settings(&current, &s.csrf, maud::html! {}))
    })
    .await
}
