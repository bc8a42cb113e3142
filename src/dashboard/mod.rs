//! The operator dashboard: server-rendered pages over the cluster, its
//! endpoints and deliveries, with the operator's actions as forms. An
//! operator signs in with an operator key once; the browser then holds a
//! signed session cookie (HttpOnly, SameSite=Strict) that names the key by
//! id, never the key itself. No script runs on the page.
//!
//! - this module: the routes, signing in and out, the session check and
//!   the error pages every handler answers with ([`PageError`]);
//! - [`views`]: the pages (overview, endpoints, endpoint, delivery, event,
//!   search);
//! - [`actions`]: the form posts (replay, skip, recover, enable, disable,
//!   rotate, expire-previous, test);
//! - [`pages`]: the markup, and [`charts`]: the overview's inline SVG;
//! - [`health`]: the one status and circuit every page shows of an endpoint;
//! - [`reads`]: what the pages read beyond the store's shared views (cards
//!   of one partner, attempt pages and averages), and [`paging`]: how their
//!   tables page.

// Handlers answer with a `Problem`; its size on the error path does not matter.
#![allow(clippy::result_large_err)]

pub mod actions;
pub mod charts;
pub mod health;
pub mod pages;
pub mod paging;
pub mod reads;
pub mod views;

use actix_web::{
    HttpRequest, HttpResponse, ResponseError,
    cookie::{Cookie, time::Duration as CookieAge},
    http::{StatusCode, header},
    web,
};
use serde::Deserialize;

use crate::{
    http::{AppState, auth, body, origin, problem::Problem},
    store::{self, keys::Role},
    web::{
        chrome::{self, html, page, see_other},
        session,
    },
};

/// How long a sign-in lasts.
const SESSION_MS: i64 = 12 * 3_600_000;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/dashboard", web::get().to(views::overview))
        .route("/dashboard/login", web::get().to(login_form))
        .route("/dashboard/login", web::post().to(login))
        .route("/dashboard/logout", web::post().to(logout))
        .route("/dashboard/endpoints", web::get().to(views::endpoints))
        .route("/dashboard/endpoints/{id}", web::get().to(views::endpoint))
        .route(
            "/dashboard/endpoints/{id}/{action}",
            web::post().to(actions::on_endpoint),
        )
        .route("/dashboard/deliveries/{id}", web::get().to(views::delivery))
        .route(
            "/dashboard/deliveries/{id}/replay",
            web::post().to(actions::replay),
        )
        .route(
            "/dashboard/deliveries/{id}/skip",
            web::post().to(actions::skip),
        )
        .route("/dashboard/events/{id}", web::get().to(views::event))
        .route("/dashboard/search", web::get().to(views::search))
        .route("/dashboard/{tail:.*}", web::get().to(views::unknown));
}

/// Why a dashboard request is not answered with its page. Each is
/// answered in HTML (or with a redirect to sign in), never problem+json.
#[derive(Debug)]
pub enum PageError {
    /// No live operator session: to the sign-in form.
    SignIn,
    /// A form refused before anything was done (posted from another site,
    /// or without its session's CSRF token): 403.
    Refused(&'static str),
    /// Not found, invalid, rate limited, or failed: the problem's status
    /// and detail (a 500 says nothing internal).
    Problem(Problem),
}

impl From<Problem> for PageError {
    fn from(p: Problem) -> PageError {
        PageError::Problem(p)
    }
}

impl From<store::StoreError> for PageError {
    fn from(e: store::StoreError) -> PageError {
        PageError::Problem(e.into())
    }
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageError::SignIn => f.write_str("not signed in"),
            PageError::Refused(why) => f.write_str(why),
            PageError::Problem(p) => write!(f, "{}: {}", p.title, p.detail),
        }
    }
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            PageError::SignIn => StatusCode::SEE_OTHER,
            PageError::Refused(_) => StatusCode::FORBIDDEN,
            PageError::Problem(p) => {
                StatusCode::from_u16(p.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            }
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        match self {
            PageError::SignIn => see_other("/dashboard/login").finish(),
            PageError::Refused(why) => html(status, pages::failed("Refused", why)),
            PageError::Problem(p) => {
                let mut res = page(status);
                if let Some(wait) = p.retry_after {
                    res.insert_header((header::RETRY_AFTER, wait.to_string()));
                }
                res.body(pages::failed(p.title, &p.detail).into_string())
            }
        }
    }
}

/// The page for a path under `/dashboard` that names nothing.
pub fn no_such_page() -> PageError {
    Problem::not_found("there is no such dashboard page").into()
}

fn session_cookie(value: String, age: CookieAge) -> Cookie<'static> {
    chrome::session_cookie(session::COOKIE, "/dashboard", value, age)
}

fn cross_site() -> HttpResponse {
    html(
        StatusCode::FORBIDDEN,
        pages::login(Some("This form was posted from another site.")),
    )
}

/// The request's session claim, if its cookie is genuine and unexpired.
fn claim(req: &HttpRequest, state: &AppState) -> Option<session::Claim> {
    let cookie = req.cookie(session::COOKIE)?;
    let now = state.shared.clock.now_ms();
    session::verify(state.shared.secrets.session_key(), cookie.value(), now)
}

/// The signed-in operator's session: its cookie is genuine, the session
/// lives (not signed out, not expired) and its key is still an unrevoked
/// operator key. Otherwise [`PageError::SignIn`].
pub async fn operator(req: &HttpRequest, state: &AppState) -> Result<session::Claim, PageError> {
    let Some(claim) = claim(req, state) else {
        return Err(PageError::SignIn);
    };
    let db = &state.shared.db;
    let now = state.shared.clock.now_ms();
    if !store::sessions::is_live(db, &claim.session_id, &claim.key_id, now).await? {
        return Err(PageError::SignIn);
    }
    let principal = store::keys::active_by_id(db, &claim.key_id).await?;
    if !principal.is_some_and(|p| p.role == Role::Operator) {
        return Err(PageError::SignIn);
    }
    Ok(claim)
}

/// A page's query, read leniently: absent fields are empty; a query that
/// cannot be read at all is a 400 page.
pub fn query<T: serde::de::DeserializeOwned>(req: &HttpRequest) -> Result<T, PageError> {
    serde_urlencoded::from_str(req.query_string())
        .map_err(|_| Problem::invalid_query("the page's query cannot be read").into())
}

/// A time typed into a form, in UTC: RFC 3339, or `YYYY-MM-DDTHH:MM[:SS]`
/// as a browser's date-time field sends it. Empty is none.
pub fn form_time(field: &str, text: &str) -> Result<Option<i64>, Problem> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Ok(Some(t.and_utc().timestamp_millis()));
        }
    }
    body::time(field, text).map(Some)
}

async fn login_form() -> HttpResponse {
    html(StatusCode::OK, pages::login(None))
}

#[derive(Deserialize)]
struct LoginForm {
    key: String,
}

/// A sign-in form is a key and little else.
const LOGIN_BODY_LIMIT: usize = 4096;

fn too_many_tries(wait: u64) -> HttpResponse {
    let text = format!("Too many tries; wait {wait} s.");
    let mut res = page(StatusCode::TOO_MANY_REQUESTS);
    res.insert_header((header::RETRY_AFTER, wait.to_string()));
    res.body(pages::login(Some(&text)).into_string())
}

/// Whether the request says it carries a form.
fn is_form(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"))
}

async fn login(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let config = &state.shared.config.http;
    if !origin::same_origin(&req, config) {
        return Ok(cross_site());
    }
    // Failed sign-ins spend the address's budget for requests without a
    // valid key; past it, nothing is read or looked up.
    if let Err(p) = auth::within_anonymous_budget(&req, &state) {
        return Ok(too_many_tries(p.retry_after.unwrap_or(1)));
    }
    if !is_form(&req) {
        return Err(Problem::unsupported_media_type(
            "send the sign-in form as application/x-www-form-urlencoded",
        ));
    }
    let body = body::read_bytes(&req, payload, LOGIN_BODY_LIMIT, config.body_timeout).await?;
    let refused = |why| {
        let p = auth::refuse_anonymous(&req, &state, Problem::unauthorized());
        match p.retry_after {
            Some(wait) => too_many_tries(wait),
            None => html(StatusCode::UNAUTHORIZED, pages::login(Some(why))),
        }
    };
    let Ok(form) = serde_urlencoded::from_bytes::<LoginForm>(&body) else {
        return Ok(refused("Enter an operator key."));
    };
    let db = &state.shared.db;
    let principal = store::keys::authenticate(db, form.key.trim()).await?;
    let Some(principal) = principal.filter(|p| p.role == Role::Operator) else {
        // Unknown, revoked and non-operator keys read the same.
        return Ok(refused("That is not an active operator key."));
    };
    let now = state.shared.clock.now_ms();
    let expires = now + SESSION_MS;
    let session_id = session::new_session_id();
    store::sessions::create(db, &session_id, &principal.key_id, now, expires).await?;
    let token = session::issue(
        state.shared.secrets.session_key(),
        &session_id,
        &principal.key_id,
        expires,
    );
    let age = CookieAge::milliseconds(SESSION_MS);
    Ok(see_other("/dashboard")
        .cookie(session_cookie(token, age))
        .finish())
}

/// Signing out ends the session on the server: a copy of the cookie kept
/// elsewhere stops working too.
async fn logout(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    if !origin::same_origin(&req, &state.shared.config.http) {
        return Ok(cross_site());
    }
    if let Some(claim) = claim(&req, &state) {
        store::sessions::end(&state.shared.db, &claim.session_id).await?;
    }
    Ok(see_other("/dashboard/login")
        .cookie(session_cookie(String::new(), CookieAge::ZERO))
        .finish())
}

#[cfg(test)]
mod tests {
    use super::form_time;

    #[test]
    fn form_times_are_read_as_utc() {
        let noon = Some(1_764_676_800_000);
        assert_eq!(form_time("since", "2025-12-02T12:00:00Z").unwrap(), noon);
        assert_eq!(
            form_time("since", "2025-12-02T13:00:00+01:00").unwrap(),
            noon
        );
        assert_eq!(form_time("since", "2025-12-02T12:00").unwrap(), noon);
        assert_eq!(form_time("since", " 2025-12-02 12:00:00 ").unwrap(), noon);
        assert_eq!(form_time("since", "").unwrap(), None);
        let bad = form_time("since", "yesterday").unwrap_err();
        assert_eq!(bad.field.as_deref(), Some("since"));
    }
}
