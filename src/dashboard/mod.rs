//! The operator dashboard: server-rendered pages over the same overview as
//! `GET /v1/admin/actors`. An operator signs in with an operator key once;
//! the browser then holds a signed session cookie (HttpOnly, SameSite=Strict)
//! that names the key by id, never the key itself. No script runs on the page.

pub mod pages;

use std::collections::HashMap;

use actix_web::{
    HttpRequest, HttpResponse,
    cookie::{Cookie, time::Duration as CookieAge},
    http::{StatusCode, header},
    web,
};
use serde::Deserialize;

use crate::{
    http::{AppState, auth, body, observe, problem::Problem},
    store::{self, keys::Role},
    web::{
        chrome::{self, html, page, see_other},
        origin, session,
    },
};

/// How long a sign-in lasts.
const SESSION_MS: i64 = 12 * 3_600_000;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/dashboard", web::get().to(overview))
        .route("/dashboard/login", web::get().to(login_form))
        .route("/dashboard/login", web::post().to(login))
        .route("/dashboard/logout", web::post().to(logout));
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

/// Whether the request's session lives (not signed out, not expired) and
/// its key is still an unrevoked operator key.
async fn signed_in(req: &HttpRequest, state: &AppState) -> Result<bool, Problem> {
    let Some(claim) = claim(req, state) else {
        return Ok(false);
    };
    let db = &state.shared.db;
    let now = state.shared.clock.now_ms();
    if !store::sessions::is_live(db, &claim.session_id, &claim.key_id, now).await? {
        return Ok(false);
    }
    let principal = store::keys::active_by_id(db, &claim.key_id).await?;
    Ok(principal.is_some_and(|p| p.role == Role::Operator))
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
    let wait = format!("Too many tries; wait {wait} s.");
    let mut res = page(StatusCode::TOO_MANY_REQUESTS);
    res.insert_header((header::RETRY_AFTER, wait.clone()));
    res.body(pages::login(Some(&wait)).into_string())
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
    let form_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if !form_type {
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

async fn overview(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    if !signed_in(&req, &state).await? {
        return Ok(see_other("/dashboard/login").finish());
    }
    let query: HashMap<String, String> =
        serde_urlencoded::from_str(req.query_string()).unwrap_or_default();
    let partner = query
        .get("partner_id")
        .map(|p| p.trim())
        .filter(|p| !p.is_empty());
    let actors = observe::overview(&state, partner, 200).await?;
    let waiting = store::backlog::waiting(&state.shared.db).await?;
    Ok(html(
        StatusCode::OK,
        pages::overview(&actors, waiting, partner),
    ))
}
