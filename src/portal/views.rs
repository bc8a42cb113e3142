//! The portal's pages to read: the partner's endpoints, one endpoint (with
//! its held subjects and the test delivery just sent), its deliveries and
//! their attempts, the event feed and one event, the notification channel.
//! Every read goes through the partner's scoped store: another partner's
//! object is a 404 page like a missing one.

use actix_web::{HttpRequest, HttpResponse, http::StatusCode, web};

use super::{
    Signed, delivery_page, endpoint_page, endpoints_page, enter, event_page, flash, form::Draft,
    pages,
};
use crate::{
    http::{
        AppState, body, page,
        partner::{
            deliveries::{AttemptOut, DeliveryOut, DeliveryQuery},
            endpoints::EndpointOut,
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
        .route("/portal/events/{id}", web::get().to(event))
        .route("/portal/settings", web::get().to(settings_view));
}

/// A problem as a page of the signed-in partner: its title and detail,
/// at its status, with the navigation.
pub fn problem_page(p: &Problem, s: &Signed) -> HttpResponse {
    let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::BAD_REQUEST);
    let text = match &p.field {
        Some(f) => format!("{} ({f})", p.detail),
        None => p.detail.clone(),
    };
    pages::message(status, p.title, &text, Some(s))
}

/// Runs `view` for a signed-in request; a problem becomes its page. A
/// page that is read clears the flash it showed (or that went stale).
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
    let signed = s.clone();
    let mut res = match view(s).await {
        Ok(page) => page,
        Err(p) if p.status >= 500 => return Err(p),
        Err(p) => problem_page(&p, &signed),
    };
    if req.method() == actix_web::http::Method::GET && flash::carried(req) {
        res.add_cookie(&flash::cleared())
            .map_err(|e| Problem::internal(&e))?;
    }
    Ok(res)
}

async fn home(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        show_endpoints(state, &s, &Draft::default()).await
    })
    .await
}

/// The endpoints, with the create form as `draft` has it.
pub async fn show_endpoints(
    state: &AppState,
    s: &Signed,
    draft: &Draft,
) -> Result<HttpResponse, Problem> {
    let scoped = for_partner(&state.shared.db, &s.partner_id);
    let list: Vec<EndpointOut> = scoped
        .endpoints(None, 500)
        .await?
        .into_iter()
        .map(EndpointOut::from)
        .collect();
    let settings = settings::read(state, &s.partner_id).await?;
    Ok(endpoints_page::endpoints(&list, &settings, s, draft))
}

/// The endpoint page of `id` with a form shown again as `draft` has it,
/// and the test delivery `test` (if it is one of this endpoint's).
pub async fn show_endpoint(
    state: &AppState,
    s: &Signed,
    id: &str,
    draft: &Draft,
    test: Option<&str>,
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
    let test = match test {
        Some(t) => scoped.delivery_with_attempts(t).await?,
        None => None,
    };
    let test = test
        .map(|(d, _)| DeliveryOut::from(d))
        .filter(|d| d.endpoint_id == id && d.event_type == "webhook.test");
    let shown = endpoint_page::EndpointShown {
        endpoint: &EndpointOut::from(e),
        recent: &recent,
        auth: &auth,
        held: &held,
        test: test.as_ref(),
        draft,
    };
    Ok(endpoint_page::endpoint(&shown, s))
}

/// `?test=<delivery>`: the test delivery an action just made.
#[derive(serde::Deserialize)]
struct EndpointQuery {
    test: Option<String>,
}

async fn endpoint(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        let q: EndpointQuery = body::query(req.query_string())?;
        show_endpoint(state, &s, &id, &Draft::default(), q.test.as_deref()).await
    })
    .await
}

async fn deliveries(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        // Empty fields of the search form mean "any".
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(req.query_string())
            .map_err(|e| Problem::invalid_query(e.to_string()))?;
        let given: Vec<(String, String)> =
            pairs.into_iter().filter(|(_, v)| !v.is_empty()).collect();
        let searched = searched(&given);
        let query = serde_urlencoded::to_string(&given).unwrap_or_default();
        let q: DeliveryQuery = body::query(&query)?;
        let (filter, before, limit) = q.search(&state.shared.config.api)?;
        let rows = for_partner(&state.shared.db, &s.partner_id)
            .deliveries(&filter, before.as_ref(), limit)
            .await?;
        let older = (rows.len() == limit as usize)
            .then(|| {
                rows.last()
                    .map(|d| page::encode_position(d.created_at, &d.id))
            })
            .flatten()
            .map(|after| older_href(&given, &after));
        let list: Vec<DeliveryOut> = rows.into_iter().map(DeliveryOut::from).collect();
        Ok(delivery_page::deliveries(&list, &searched, older, &s))
    })
    .await
}

/// What the search form shows again of the query `given`.
fn searched(given: &[(String, String)]) -> delivery_page::Searched {
    let get = |name: &str| {
        given
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    delivery_page::Searched {
        state: get("state"),
        endpoint_id: get("endpoint_id"),
    }
}

/// The next page of the search `given`: the same filters, after `after`.
fn older_href(given: &[(String, String)], after: &str) -> String {
    let mut pairs: Vec<(&str, &str)> = given
        .iter()
        .filter(|(k, _)| k != "after")
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    pairs.push(("after", after));
    let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
    format!("/portal/deliveries?{query}")
}

/// The delivery page of `id`, with its replay form as `draft` has it.
pub async fn show_delivery(
    state: &AppState,
    s: &Signed,
    id: &str,
    draft: &Draft,
) -> Result<HttpResponse, Problem> {
    let (d, attempts) = for_partner(&state.shared.db, &s.partner_id)
        .delivery_with_attempts(id)
        .await?
        .ok_or_else(|| Problem::not_found("no such delivery"))?;
    let attempts: Vec<AttemptOut> = attempts.into_iter().map(AttemptOut::from).collect();
    Ok(delivery_page::delivery(
        &DeliveryOut::from(d),
        &attempts,
        s,
        draft,
    ))
}

async fn delivery(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        show_delivery(state, &s, &id, &Draft::default()).await
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
        let after = page::feed_after(q.after.as_deref())?;
        let rows = for_partner(&state.shared.db, &s.partner_id)
            .feed(&Default::default(), after, 100)
            .await?;
        let last = rows.last().map_or(after, |(seq, _)| *seq);
        let list: Vec<_> = rows.into_iter().map(|(_, e)| e).collect();
        Ok(event_page::events(&list, &page::encode_seq(last), &s))
    })
    .await
}

/// One event and its deliveries, read as `GET /v1/events/{id}` reads them.
async fn event(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        let (e, deliveries) = for_partner(&state.shared.db, &s.partner_id)
            .event(&id)
            .await?
            .ok_or_else(|| Problem::not_found("no such event"))?;
        let deliveries: Vec<DeliveryOut> = deliveries.into_iter().map(DeliveryOut::from).collect();
        Ok(event_page::event(&e, &deliveries, &s))
    })
    .await
}

/// The notification channel, with its form as `draft` has it.
pub async fn show_settings(
    state: &AppState,
    s: &Signed,
    draft: &Draft,
) -> Result<HttpResponse, Problem> {
    let current = settings::read(state, &s.partner_id).await?;
    Ok(pages::settings(&current, s, draft))
}

async fn settings_view(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        show_settings(state, &s, &Draft::default()).await
    })
    .await
}
