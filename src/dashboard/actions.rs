//! The operator's actions as form posts: replay a delivery, or skip a dead
//! head that holds its subject; enable, disable or recover an endpoint.
//! Each post must come from hookd's own origin, from a live session, and
//! carry that session's CSRF token; otherwise it is refused (403) and
//! nothing is done. Each then acts exactly as the operator API does (the
//! same functions, the same audit entry, written with via = dashboard) and
//! redirects (303) back to the page with a confirmation.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, de::DeserializeOwned};

use super::{PageError, form_time, is_form, no_such_page, operator, pages::href};
use crate::{
    domain::event::format_time,
    http::{
        AppState, admin_audit::Actor, admin_deliveries, admin_endpoints, admin_ordering, body,
        origin, partner::endpoint_shapes::Recover, problem::Problem, rate_limit::retry_after,
    },
    store::{audit::Via, endpoints::EndpointStatus},
    web::{chrome::see_other, csrf},
};

/// An action's form is a token and a few short fields.
const FORM_LIMIT: usize = 8 * 1024;

const CROSS_SITE: &str = "This form was posted from another site; nothing was done.";
const NO_TOKEN: &str = "This form did not carry this session's token (it may come from an \
     older sign-in or from another site); nothing was done. Reload the page and try again.";

/// Checks a form post and reads it: from hookd's own origin, by a signed-in
/// operator, with the session's CSRF token, within the key's rate limit.
/// Returns who acts (via the dashboard, from the client's address) and
/// the form's fields.
async fn form<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<(Actor, T), PageError> {
    let config = &state.shared.config.http;
    if !origin::same_origin(req, config) {
        return Err(PageError::Refused(CROSS_SITE));
    }
    let claim = operator(req, state).await?;
    if !is_form(req) {
        return Err(PageError::Refused(NO_TOKEN));
    }
    let bytes = body::read_bytes(req, payload, FORM_LIMIT, config.body_timeout).await?;
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(&bytes)
        .map_err(|_| Problem::invalid_query("the form cannot be read"))?;
    let token = pairs
        .iter()
        .find(|(name, _)| name == csrf::FIELD)
        .map_or("", |(_, value)| value.as_str());
    if !csrf::verify(state.shared.secrets.session_key(), &claim.session_id, token) {
        return Err(PageError::Refused(NO_TOKEN));
    }
    state
        .limiter
        .take(&claim.key_id)
        .map_err(|wait| Problem::too_many_requests(retry_after(wait)))?;
    let fields = serde_urlencoded::from_bytes(&bytes)
        .map_err(|e| Problem::invalid_query(format!("the form is invalid: {e}")))?;
    let actor = Actor {
        key_id: claim.key_id,
        via: Via::Dashboard,
        remote_addr: crate::http::admin_audit::remote_addr(req, state),
    };
    Ok((actor, fields))
}

/// Back to the page of `base`/`id`, saying what was done.
fn back(base: &str, id: &str, query: &str) -> HttpResponse {
    see_other(&format!("{}?{query}", href(base, id))).finish()
}

/// A form with no fields but its token.
#[derive(Deserialize)]
struct Empty {}

/// The replay form: `back=endpoint` returns to the delivery's endpoint
/// (from its held subjects) instead of the delivery.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ReplayForm {
    back: String,
}

pub async fn replay(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (actor, f): (_, ReplayForm) = form(&req, payload, &state).await?;
    let queued = admin_deliveries::replay_as(&state, &actor, &id).await?;
    Ok(match f.back.as_str() {
        "endpoint" => back("/dashboard/endpoints", &queued.endpoint_id, "done=replayed"),
        _ => back(
            "/dashboard/deliveries",
            &queued.delivery_id,
            "done=replayed",
        ),
    })
}

/// `POST /dashboard/deliveries/{id}/skip`: a dead head stops holding its
/// subject; back to its endpoint.
pub async fn skip(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (actor, Empty {}) = form(&req, payload, &state).await?;
    let skipped = admin_ordering::skip_as(&state, &actor, &id).await?;
    Ok(back(
        "/dashboard/endpoints",
        &skipped.endpoint_id,
        "done=skipped",
    ))
}

/// The fields of an endpoint's forms (each form sends its own).
#[derive(Default, Deserialize)]
#[serde(default)]
struct EndpointForm {
    /// Disable: why (the partner sees it).
    reason: String,
    /// Recover: the range of creation times.
    since: String,
    until: String,
}

/// `POST /dashboard/endpoints/{id}/{enable|disable|recover}`.
pub async fn on_endpoint(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (id, action) = path.into_inner();
    if !["enable", "disable", "recover"].contains(&action.as_str()) {
        return Err(no_such_page());
    }
    let (actor, f): (_, EndpointForm) = form(&req, payload, &state).await?;
    let e = admin_endpoints::find(&state, &id).await?;
    let target = e.id.clone();
    let done = match action.as_str() {
        "enable" => {
            admin_endpoints::set_status_as(&state, &actor, e, EndpointStatus::Active, None).await?;
            "done=enabled".to_string()
        }
        "disable" => {
            let reason = Some(f.reason.trim()).filter(|r| !r.is_empty());
            let off = EndpointStatus::Disabled;
            admin_endpoints::set_status_as(&state, &actor, e, off, reason).await?;
            "done=disabled".to_string()
        }
        _ => {
            let since = form_time("since", &f.since)?
                .ok_or_else(|| Problem::invalid("since", "since is required: the range's start"))?;
            let input = Recover {
                since: format_time(since),
                until: form_time("until", &f.until)?.map(format_time),
            };
            let replayed = admin_endpoints::recover_as(&state, &actor, &e, &input).await?;
            format!("done=recovered&replayed={replayed}")
        }
    };
    Ok(back("/dashboard/endpoints", &target, &done))
}
