//! The operator dashboard: server-rendered pages over the same overview as
//! `GET /v1/admin/actors`. An operator signs in with an operator key once;
//! the browser then holds a signed session cookie (HttpOnly, SameSite=Strict)
//! that names the key by id, never the key itself. No script runs on the page.

pub mod pages;
pub mod session;

use std::collections::HashMap;

use actix_web::{
    HttpRequest, HttpResponse, HttpResponseBuilder,
    cookie::{Cookie, SameSite, time::Duration as CookieAge},
    http::{StatusCode, header},
    web,
};
use maud::Markup;
use serde::Deserialize;

use crate::{
    http::{AppState, observe, problem::Problem},
    store::{self, keys::Role},
};

/// How long a sign-in lasts.
const SESSION_MS: i64 = 12 * 3_600_000;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/dashboard", web::get().to(overview))
        .route("/dashboard/login", web::get().to(login_form))
        .route("/dashboard/login", web::post().to(login))
        .route("/dashboard/logout", web::post().to(logout));
}

/// Headers every dashboard page carries: no script, no framing, no caching,
/// no referrer leaving the site with ids in it (`same-origin`, not
/// `no-referrer`, which would make the browser send `Origin: null` on the
/// dashboard's own form posts).
fn page(status: StatusCode) -> HttpResponseBuilder {
    let mut res = HttpResponse::build(status);
    res.insert_header((
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ))
    .insert_header((header::X_FRAME_OPTIONS, "DENY"))
    .insert_header((header::REFERRER_POLICY, "same-origin"))
    .insert_header((header::CACHE_CONTROL, "no-store"))
    .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
    .content_type("text/html; charset=utf-8");
    res
}

fn html(status: StatusCode, markup: Markup) -> HttpResponse {
    page(status).body(markup.into_string())
}

fn see_other(to: &str) -> HttpResponseBuilder {
    let mut res = page(StatusCode::SEE_OTHER);
    res.insert_header((header::LOCATION, to));
    res
}

/// Always `Secure`: behind a TLS proxy hookd may not know the scheme, and
/// browsers keep Secure cookies on `http://localhost` and `127.0.0.1` anyway.
fn session_cookie(value: String, age: CookieAge) -> Cookie<'static> {
    Cookie::build(session::COOKIE, value)
        .path("/dashboard")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(true)
        .max_age(age)
        .finish()
}

/// A form posted from another site is refused: its `Origin` names another
/// host (or `null`). Browsers send `Origin` on every cross-site POST.
fn same_origin(req: &HttpRequest) -> bool {
    match req.headers().get(header::ORIGIN).map(|v| v.to_str()) {
        None => true,
        Some(Ok(origin)) => origin
            .split_once("://")
            .is_some_and(|(_, host)| host == req.connection_info().host()),
        Some(Err(_)) => false,
    }
}

fn cross_site() -> HttpResponse {
    html(
        StatusCode::FORBIDDEN,
        pages::login(Some("This form was posted from another site.")),
    )
}

/// The operator key behind the request's session, if it is genuine, current
/// and the key is still an unrevoked operator key.
async fn signed_in(req: &HttpRequest, state: &AppState) -> Result<bool, Problem> {
    let Some(cookie) = req.cookie(session::COOKIE) else {
        return Ok(false);
    };
    let now = state.shared.clock.now_ms();
    let Some(key_id) = session::verify(state.shared.secrets.session_key(), cookie.value(), now)
    else {
        return Ok(false);
    };
    let principal = store::keys::active_by_id(&state.shared.db, &key_id).await?;
    Ok(principal.is_some_and(|p| p.role == Role::Operator))
}

async fn login_form() -> HttpResponse {
    html(StatusCode::OK, pages::login(None))
}

#[derive(Deserialize)]
struct LoginForm {
    key: String,
}

async fn login(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    if !same_origin(&req) {
        return Ok(cross_site());
    }
    // Guessing keys is hopeless (30 random bytes), but each address still
    // gets the API's per-key budget of tries.
    let peer = req
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    if let Err(wait) = state.limiter.take(
        &format!("dashboard-login {peer}"),
        std::time::Instant::now(),
    ) {
        let wait = format!("Too many tries; wait {} s.", wait.as_secs().max(1));
        return Ok(html(
            StatusCode::TOO_MANY_REQUESTS,
            pages::login(Some(&wait)),
        ));
    }
    let refused = |why| html(StatusCode::UNAUTHORIZED, pages::login(Some(why)));
    let Ok(form) = serde_urlencoded::from_bytes::<LoginForm>(&body) else {
        return Ok(refused("Enter an operator key."));
    };
    let principal = store::keys::authenticate(&state.shared.db, form.key.trim()).await?;
    let Some(principal) = principal.filter(|p| p.role == Role::Operator) else {
        // Unknown, revoked and non-operator keys read the same.
        return Ok(refused("That is not an active operator key."));
    };
    let expires = state.shared.clock.now_ms() + SESSION_MS;
    let token = session::issue(
        state.shared.secrets.session_key(),
        &principal.key_id,
        expires,
    );
    let age = CookieAge::milliseconds(SESSION_MS);
    Ok(see_other("/dashboard")
        .cookie(session_cookie(token, age))
        .finish())
}

async fn logout(req: HttpRequest) -> HttpResponse {
    if !same_origin(&req) {
        return cross_site();
    }
    see_other("/dashboard/login")
        .cookie(session_cookie(String::new(), CookieAge::ZERO))
        .finish()
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
