//! The partner portal, `/portal`: the people a reseller's partners employ
//! manage their endpoints (with their ordering, filter and held subjects),
//! secrets, deliveries and notification channel in the browser. Signing in
//! takes a partner key (the same form as the dashboard's) or a one-time
//! link an operator minted; either opens a 12-hour session that sees one
//! partner only, through the same scoped store and operations as the
//! Partner API. The dashboard's rules hold: escaped pages with no script,
//! HttpOnly SameSite=Strict cookies, a strict CSP, the `Origin` check and a
//! CSRF token on every form, rate limits.

// Handlers answer with a `Problem`; its size on the error path does not matter.
#![allow(clippy::result_large_err)]

mod actions;
mod answer;
mod auth_page;
mod badge;
mod credentials;
mod delivery_page;
mod endpoint_page;
mod endpoints_page;
mod event_page;
mod flash;
mod form;
mod incidents_page;
mod pages;
mod routing;
mod routing_page;
mod style;
mod views;

use actix_web::{
    HttpRequest, HttpResponse,
    cookie::{Cookie, time::Duration as CookieAge},
    http::StatusCode,
    web,
};

use crate::{
    http::{AppState, auth, origin, problem::Problem, rate_limit},
    store::{self, keys::Role},
    web::{
        chrome::{self, html, see_other},
        csrf,
        session::{self, Realm},
    },
};

/// The portal's session cookie.
const COOKIE: &str = "hookd_portal";
/// How long a portal session lasts.
const SESSION_MS: i64 = 12 * 3_600_000;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/portal/login", web::get().to(login_form))
        .route("/portal/login", web::post().to(login))
        .route("/portal/link/{token}", web::get().to(link_form))
        .route("/portal/link/{token}", web::post().to(link))
        .route("/portal/logout", web::post().to(logout));
    views::routes(cfg);
    actions::routes(cfg);
    credentials::routes(cfg);
    routing::routes(cfg);
    incidents_page::routes(cfg);
}

/// Who is signed in: the session, and the one partner it sees.
#[derive(Debug, Clone)]
pub struct Signed {
    pub session_id: String,
    pub key_id: String,
    pub partner_id: String,
    /// The token every form of this session carries.
    pub csrf: String,
    /// What the action that redirected here did, said once.
    pub flash: Option<flash::Flash>,
    /// When the request came (times are shown relative to it).
    pub now_ms: i64,
}

fn cookie(value: String, age: CookieAge) -> Cookie<'static> {
    chrome::session_cookie(COOKIE, "/portal", value, age)
}

/// The signed-in session of the request, if its cookie is genuine, its
/// session lives, and what opened it (a partner key, or a link) still holds.
async fn signed(req: &HttpRequest, state: &AppState) -> Result<Option<Signed>, Problem> {
    let Some(c) = req.cookie(COOKIE) else {
        return Ok(None);
    };
    let key = state.shared.secrets.session_key();
    let now = state.shared.clock.now_ms();
    let Some(claim) = session::verify_in(Realm::Portal, key, c.value(), now) else {
        return Ok(None);
    };
    let db = &state.shared.db;
    let Some(partner_id) =
        store::sessions::portal_partner(db, &claim.session_id, &claim.key_id, now).await?
    else {
        return Ok(None);
    };
    // A key session ends when its key is revoked; a link's lasts its 12 h.
    if !claim.key_id.starts_with("pl_") {
        let principal = store::keys::active_by_id(db, &claim.key_id).await?;
        let holds = principal.is_some_and(|p| {
            p.role == Role::Partner && p.partner_id.as_deref() == Some(partner_id.as_str())
        });
        if !holds {
            return Ok(None);
        }
    }
    Ok(Some(Signed {
        csrf: csrf::token(key, &claim.session_id),
        flash: flash::read(req, key, &claim.session_id),
        now_ms: now,
        session_id: claim.session_id,
        key_id: claim.key_id,
        partner_id,
    }))
}

/// What a portal request gets before its handler runs: the session, or a
/// page that sends the browser to sign in or to wait (rate limited per
/// session, as API keys are).
async fn enter(
    req: &HttpRequest,
    state: &AppState,
) -> Result<Result<Signed, HttpResponse>, Problem> {
    let Some(s) = signed(req, state).await? else {
        return Ok(Err(see_other("/portal/login").finish()));
    };
    if let Err(wait) = state.limiter.take(&s.key_id) {
        let secs = rate_limit::retry_after(wait);
        let mut page = pages::message(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests",
            &format!("Wait {secs} s and try again."),
            // What the last action did is said on the next page read.
            Some(&Signed { flash: None, ..s }),
        );
        let retry_after = actix_web::http::header::HeaderValue::from(secs);
        page.headers_mut()
            .insert(actix_web::http::header::RETRY_AFTER, retry_after);
        return Ok(Err(page));
    }
    Ok(Ok(s))
}

fn cross_site() -> HttpResponse {
    pages::message(
        StatusCode::FORBIDDEN,
        "Refused",
        "This form was posted from another site, or without this page's token.",
        None,
    )
}

async fn login_form() -> HttpResponse {
    html(StatusCode::OK, pages::login(None))
}

fn too_many_tries(wait: u64) -> HttpResponse {
    let text = format!("Too many tries; wait {wait} s.");
    let mut res = chrome::page(StatusCode::TOO_MANY_REQUESTS);
    res.insert_header((actix_web::http::header::RETRY_AFTER, wait.to_string()));
    res.body(pages::login(Some(pages::Refused::Said(&text))).into_string())
}

/// Opens a session of `partner_id` for `key_id` and sends the browser home.
async fn open_session(
    state: &AppState,
    key_id: &str,
    partner_id: &str,
) -> Result<HttpResponse, Problem> {
    let now = state.shared.clock.now_ms();
    let expires = now + SESSION_MS;
    let session_id = session::new_session_id();
    store::sessions::create_for_partner(
        &state.shared.db,
        &session_id,
        key_id,
        partner_id,
        now,
        expires,
    )
    .await?;
    let token = session::issue_in(
        Realm::Portal,
        state.shared.secrets.session_key(),
        &session_id,
        key_id,
        expires,
    );
    Ok(see_other("/portal")
        .cookie(cookie(token, CookieAge::milliseconds(SESSION_MS)))
        .finish())
}

async fn login(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    if !origin::same_origin(&req, &state.shared.config.http) {
        return Ok(cross_site());
    }
    // Failed sign-ins spend the address's budget for requests without a key.
    if let Err(p) = auth::within_anonymous_budget(&req, &state) {
        return Ok(too_many_tries(p.retry_after.unwrap_or(1)));
    }
    let refused = |why| {
        let p = auth::refuse_anonymous(&req, &state, Problem::unauthorized());
        match p.retry_after {
            Some(wait) => too_many_tries(wait),
            None => html(StatusCode::UNAUTHORIZED, pages::login(Some(why))),
        }
    };
    let Ok(fields) = form::read(&req, payload, &state, form::LIMIT).await else {
        return Ok(refused(pages::Refused::Said("Enter a partner key.")));
    };
    let key = fields.get("key").map(|k| k.trim()).unwrap_or_default();
    let principal = store::keys::authenticate(&state.shared.db, key).await?;
    // An operator's key is refused here too (and spends the budget), but
    // the page says where it does sign in.
    if principal.as_ref().is_some_and(|p| p.role == Role::Operator) {
        return Ok(refused(pages::Refused::OperatorKey));
    }
    let Some((principal, partner)) = principal
        .filter(|p| p.role == Role::Partner)
        .and_then(|p| p.partner_id.clone().map(|id| (p, id)))
    else {
        return Ok(refused(pages::Refused::Said(
            "That is not an active partner key.",
        )));
    };
    open_session(&state, &principal.key_id, &partner).await
}

/// A link is used by a POST from this page, not by opening it: a mail
/// scanner that fetches the link does not spend it.
async fn link_form(
    token: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let db = &state.shared.db;
    let now = state.shared.clock.now_ms();
    let partner = match store::portal_links::peek(db, &token, now).await? {
        Some(id) => store::partners::find(db, &id).await?,
        None => None,
    };
    Ok(match partner {
        Some(p) => html(StatusCode::OK, pages::link(&p.name, &token)),
        None => pages::link_spent(),
    })
}

async fn link(
    req: HttpRequest,
    token: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    if !origin::same_origin(&req, &state.shared.config.http) {
        return Ok(cross_site());
    }
    if let Err(p) = auth::within_anonymous_budget(&req, &state) {
        return Ok(too_many_tries(p.retry_after.unwrap_or(1)));
    }
    let now = state.shared.clock.now_ms();
    match store::portal_links::consume(&state.shared.db, &token, now).await? {
        Some((link_id, partner)) => open_session(&state, &link_id, &partner).await,
        None => {
            auth::refuse_anonymous(&req, &state, Problem::unauthorized());
            Ok(pages::link_spent())
        }
    }
}

/// Signing out ends the session on the server.
async fn logout(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let Some(s) = signed(&req, &state).await? else {
        return Ok(see_other("/portal/login").finish());
    };
    if form::genuine(&req, payload, &state, &s, form::LIMIT)
        .await?
        .is_none()
    {
        return Ok(cross_site());
    }
    store::sessions::end(&state.shared.db, &s.session_id).await?;
    Ok(see_other("/portal/login")
        .cookie(cookie(String::new(), CookieAge::ZERO))
        .finish())
}
