//! The operator's actions as form posts: replay a delivery, or skip a dead
//! head that holds its subject; enable, disable or recover an endpoint;
//! rotate its secret, end the rotation overlap, send it a test event.
//! Each post must come from hookd's own origin, from a live session, and
//! carry that session's CSRF token; otherwise it is refused (403) and
//! nothing is done. Each then acts exactly as the operator API does (the
//! same functions, the same audit entry, written with via = dashboard) and
//! redirects (303) back to the page with a confirmation; a rotation
//! instead answers with the endpoint page showing the new secret once, so
//! no URL ever carries it.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, de::DeserializeOwned};

use super::{
    PageError, form_time, is_form, no_such_page, operator,
    pages::{self, href, secrets::Rotated},
    paging::Cursor,
    views::endpoint_page,
};
use crate::{
    domain::event::format_time,
    http::{
        AppState,
        admin_audit::Actor,
        admin_deliveries, admin_endpoint_ops, admin_endpoints, admin_ordering, body, origin,
        partner::endpoint_shapes::{Recover, RotateSecret, SchemeIn},
        problem::Problem,
        rate_limit::retry_after,
    },
    store::{audit::Via, endpoints::EndpointStatus},
    web::{
        chrome::{html, see_other},
        csrf,
    },
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
    let (actor, fields, _) = form_in_session(req, payload, state).await?;
    Ok((actor, fields))
}

/// [`form`], with the CSRF token of the session for the page it answers with.
async fn form_in_session<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<(Actor, T, String), PageError> {
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
    Ok((actor, fields, token.to_string()))
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
    /// Rotate: how long the previous secret keeps signing (s), and the
    /// new key's scheme (`v1`, `v1a`).
    overlap_seconds: String,
    scheme: String,
}

impl EndpointForm {
    /// The rotation the form asks for, as the Partner API reads it.
    fn rotation(&self) -> Result<RotateSecret, Problem> {
        let overlap = match self.overlap_seconds.trim() {
            "" => None,
            text => Some(text.parse().map_err(|_| {
                Problem::invalid(
                    "overlap_seconds",
                    "overlap_seconds must be a whole number of seconds",
                )
            })?),
        };
        let scheme = match self.scheme.trim() {
            "" | "v1" => SchemeIn::V1,
            "v1a" => SchemeIn::V1a,
            _ => return Err(Problem::invalid("scheme", "scheme must be v1 or v1a")),
        };
        Ok(RotateSecret {
            overlap_seconds: overlap,
            scheme: Some(scheme),
        })
    }
}

/// What an endpoint's form names.
const ENDPOINT_ACTIONS: [&str; 6] = [
    "enable",
    "disable",
    "recover",
    "rotate",
    "expire-previous",
    "test",
];

/// `POST /dashboard/endpoints/{id}/{enable|disable|recover|expire-previous|test}`,
/// and `rotate`, which answers with the page itself (see [`rotate`]).
pub async fn on_endpoint(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PageError> {
    let (id, action) = path.into_inner();
    if !ENDPOINT_ACTIONS.contains(&action.as_str()) {
        return Err(no_such_page());
    }
    let (actor, f, csrf): (_, EndpointForm, _) = form_in_session(&req, payload, &state).await?;
    let e = admin_endpoints::find(&state, &id).await?;
    let target = e.id.clone();
    let done = match action.as_str() {
        "rotate" => {
            let input = f.rotation()?;
            let (key, until) = admin_endpoint_ops::rotate_as(&state, &actor, &e, &input).await?;
            let rotated = Rotated {
                shown: key.shown(),
                previous_until_ms: until,
            };
            return rotate(&state, &target, csrf, &rotated).await;
        }
        "expire-previous" => {
            let n = admin_endpoint_ops::expire_previous_as(&state, &actor, &e).await?;
            format!("done=expired&expired={n}")
        }
        "test" => {
            let (_, delivery) = admin_endpoint_ops::send_test_as(&state, &actor, &e).await?;
            serde_urlencoded::to_string(&[("done", "tested"), ("test", delivery.as_str())][..])
                .unwrap_or_default()
        }
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

/// The answer to a rotation: the endpoint page (200) with the new secret
/// shown this once; reloading it posts again, as a browser warns.
async fn rotate(
    state: &AppState,
    id: &str,
    csrf: String,
    rotated: &Rotated,
) -> Result<HttpResponse, PageError> {
    let forms = pages::Forms {
        csrf,
        ..pages::Forms::default()
    };
    let page = endpoint_page(state, id, &forms, &Cursor::default(), Some(rotated)).await?;
    // Like every dashboard page, answered `Cache-Control: no-store`.
    Ok(html(actix_web::http::StatusCode::OK, page))
}
