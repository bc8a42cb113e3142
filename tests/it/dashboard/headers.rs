//! What every dashboard answer carries, over plain HTTP: a policy that
//! forbids scripts, foreign forms and framing; headers that keep pages out
//! of caches, frames and other sites' referrers; and a session cookie that
//! scripts, other sites, plain http and the rest of hookd never see.

use std::collections::BTreeSet;

use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieAge};

use super::sign_in::{Answer, answer, assert_signed_in, client, sign_in, with_session};
use crate::harness::{TestApp, answer::header};
use hookd_test_macros::both_backends;

/// `GET path` on the dashboard, with the session cookie `session` if given.
async fn get(app: &TestApp, path: &str, session: Option<&str>) -> Answer {
    let mut req = client().get(format!("{}{path}", app.base_url));
    if let Some(session) = session {
        req = req.insert_header(("cookie", format!("hookd_session={session}")));
    }
    answer(&req.send().await.expect("the dashboard answers"))
}

/// The dashboard's policy: no script, style or image from anywhere else, no
/// form posted elsewhere, never framed, no `<base>`.
const POLICY: [&str; 6] = [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
];

/// The directives of a `Content-Security-Policy`, whatever their order.
fn directives(policy: &str) -> BTreeSet<String> {
    policy
        .split(';')
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .collect()
}

/// Each kind of dashboard answer a browser gets: the form, the redirect to
/// it, the page signed in, an unknown page, and signing in itself.
async fn every_kind_of_answer(app: &TestApp) -> Vec<(&'static str, Answer)> {
    let own = app.base_url.clone();
    let signed = sign_in(app, &app.operator_key().await, &[("origin", &own)]).await;
    let cookie = signed.session.clone().expect("a session cookie");
    vec![
        ("the sign-in form", get(app, "/dashboard/login", None).await),
        ("the redirect to it", get(app, "/dashboard", None).await),
        (
            "the overview",
            get(app, "/dashboard", Some(cookie.as_str())).await,
        ),
        (
            "an unknown page",
            get(app, "/dashboard/nope", Some(cookie.as_str())).await,
        ),
        ("signing in", signed),
    ]
}

#[both_backends]
async fn every_dashboard_answer_carries_the_strict_content_security_policy(app: TestApp) {
    let expected: BTreeSet<String> = POLICY.iter().map(|d| d.to_string()).collect();
    for (what, got) in every_kind_of_answer(&app).await {
        let policy = header(&got.headers, "content-security-policy");
        let policy = policy.unwrap_or_else(|| panic!("{what} has no CSP: {got:?}"));
        assert_eq!(directives(policy), expected, "{what}: {policy}");
    }
}

#[both_backends]
async fn every_dashboard_answer_is_never_framed_sniffed_cached_or_referred_elsewhere(app: TestApp) {
    for (what, got) in every_kind_of_answer(&app).await {
        let h = |name| header(&got.headers, name);
        assert_eq!(h("x-frame-options"), Some("DENY"), "{what}");
        assert_eq!(h("x-content-type-options"), Some("nosniff"), "{what}");
        assert_eq!(h("cache-control"), Some("no-store"), "{what}");
        assert_eq!(h("referrer-policy"), Some("same-origin"), "{what}");
    }
}

/// The `hookd_session` cookie an answer sets.
#[track_caller]
fn session_cookie(got: &Answer) -> Cookie<'static> {
    got.headers
        .get_all("set-cookie")
        .filter_map(|v| Cookie::parse(v.to_str().ok()?.to_string()).ok())
        .find(|c| c.name() == "hookd_session")
        .unwrap_or_else(|| panic!("no hookd_session cookie: {got:?}"))
}

/// The cookie's attributes that keep it from scripts, other sites, plain
/// http and the rest of hookd.
#[track_caller]
fn assert_guarded(cookie: &Cookie<'_>) {
    assert_eq!(cookie.http_only(), Some(true), "HttpOnly: {cookie}");
    assert_eq!(cookie.same_site(), Some(SameSite::Strict), "{cookie}");
    assert_eq!(cookie.secure(), Some(true), "Secure: {cookie}");
    assert_eq!(cookie.path(), Some("/dashboard"), "{cookie}");
}

#[both_backends]
async fn the_session_cookie_is_http_only_strict_secure_and_lasts_twelve_hours(app: TestApp) {
    let own = app.base_url.clone();
    let signed = sign_in(&app, &app.operator_key().await, &[("origin", &own)]).await;
    assert_signed_in(&signed, "an operator key");
    let cookie = session_cookie(&signed);
    assert_guarded(&cookie);
    assert_eq!(cookie.max_age(), Some(CookieAge::hours(12)), "{cookie}");
}

#[both_backends]
async fn signing_out_clears_the_same_cookie_it_set(app: TestApp) {
    let own = app.base_url.clone();
    let signed = sign_in(&app, &app.operator_key().await, &[("origin", &own)]).await;
    let value = session_cookie(&signed).value().to_string();
    let out = with_session(&app, "POST", "/dashboard/logout", &value, &own).await;
    let cleared = session_cookie(&out);
    assert_guarded(&cleared);
    assert_eq!(cleared.value(), "", "{cleared}");
    assert_eq!(cleared.max_age(), Some(CookieAge::ZERO), "{cleared}");
}
