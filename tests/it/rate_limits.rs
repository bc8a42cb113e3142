//! Rate limits per kind of caller, on the injected clock: each kind's burst
//! is served, the next request is 429 with a `Retry-After` of the refill
//! time, one caller's spending leaves the others' budgets alone, and moving
//! the clock serves exactly what refilled (rate × time, up to the burst).
//!
//! The kinds: partner and operator keys (`api.rate_limit_*`), service keys
//! at ingest (`api.service_rate_limit_*`), and requests without a valid key,
//! sign-ins included, by client address (`api.anonymous_rate_limit_*`);
//! a valid key past its address's spent budget: `rate_limits_shared`.

use std::{future::Future, time::Duration};

use serde_json::json;

use crate::harness::{
    ApiAnswer, Limited, TestApp, answer::header, rate_limit, read_answer,
    rows::assert_stored_events, spawn_app_with,
};
use hookd_test_macros::both_backends;

/// A partner route that reads nothing but the caller's key.
pub(crate) const PARTNER_ROUTE: &str = "/v1/limits";
/// An operator route.
const OPERATOR_ROUTE: &str = "/v1/admin/endpoints";
/// A key no one holds: each use is a 401 that spends the address's budget.
const WRONG_KEY: &str = "hkp_wrong";

/// Sends requests until hookd answers 429 (at most 20): how many were
/// answered `expected` first, and the 429. Any other status fails the test.
pub(crate) async fn until_429<F, Fut>(expected: u16, mut send: F) -> (usize, ApiAnswer)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ApiAnswer>,
{
    for answered in 0..20 {
        let answer = send().await;
        match answer.0 {
            429 => return (answered, answer),
            status if status == expected => {}
            status => panic!("expected {expected} or 429, got {status}: {}", answer.1),
        }
    }
    panic!("20 requests were answered {expected} and none was refused with 429")
}

/// How many `GET path` with `key` are served (200) before the first 429.
async fn served(app: &TestApp, path: &str, key: &str) -> (usize, ApiAnswer) {
    until_429(200, || app.request("GET", path, key, None)).await
}

/// How many events `key` publishes (201) before the first 429.
async fn published(app: &TestApp, key: &str) -> (usize, ApiAnswer) {
    let event = json!({"type": "usage.finalized", "schema_version": 1, "partner_id": app.partner_id,
        "data": {"customer_id": "cus_204", "currency": "USD", "final_cost": "1.20"}});
    until_429(201, || app.request("POST", "/v1/events", key, Some(&event))).await
}

/// How many requests with a key no one holds get 401 before the first 429.
async fn refused_as_unknown(app: &TestApp) -> (usize, ApiAnswer) {
    until_429(401, || app.request("GET", PARTNER_ROUTE, WRONG_KEY, None)).await
}

/// The answer is the rate limit's problem, with `Retry-After: {seconds}`.
#[track_caller]
pub(crate) fn assert_limited(answer: &ApiAnswer, seconds: &str) {
    let (status, body, headers) = answer;
    assert_eq!(*status, 429, "{body}");
    assert_eq!(
        body["type"], "https://hookd.dev/problems/rate-limited",
        "{body}"
    );
    assert_eq!(
        header(headers, "content-type"),
        Some("application/problem+json")
    );
    assert_eq!(
        header(headers, "retry-after"),
        Some(seconds),
        "Retry-After must say when the next token is there: {body}"
    );
}

/// For each step (milliseconds, count, why): moves the clock that far, then
/// `count` must get exactly `count` through before a 429 (`why`), and the
/// 429 is the rate limit's, saying the next token is at most a second away.
async fn expect_refills<F, Fut>(app: &TestApp, steps: &[(u64, usize, &str)], mut count: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = (usize, ApiAnswer)>,
{
    for (ms, expected, why) in steps {
        app.advance(Duration::from_millis(*ms));
        let (n, refusal) = count().await;
        assert_eq!(n, *expected, "{why}");
        assert_limited(&refusal, "1");
    }
}

// ----- partner and operator keys -----

#[both_backends]
async fn a_key_over_its_rate_limit_gets_429_and_other_keys_do_not(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Keys, "2", "2")).await;
    let key = app.partner_key().await;
    let (_, other) = app.another_partner("Other").await;
    let (n, refusal) = served(&app, PARTNER_ROUTE, &key).await;
    assert_eq!(n, 2, "the burst of 2 is served, then no more");
    assert_limited(&refusal, "1");
    let (n, _) = served(&app, PARTNER_ROUTE, &other).await;
    assert_eq!(n, 2, "another partner's key has its whole burst");
}

#[both_backends]
async fn a_partner_key_is_served_again_at_its_rate_as_the_clock_moves(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Keys, "2", "2")).await;
    let key = app.partner_key().await;
    #[rustfmt::skip]
        let steps = [
            (0,      2, "the burst"),
            (250,    0, "half a token after a quarter second at 2/s"),
            (250,    1, "one token after half a second at 2/s"),
            (1_000,  2, "two tokens after a second at 2/s"),
            (60_000, 2, "an idle minute refills the burst of 2, no more"),
        ];
    expect_refills(&app, &steps, || served(&app, PARTNER_ROUTE, &key)).await;
}

#[both_backends]
async fn an_operator_key_has_the_keys_limit_and_spends_no_partners(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Keys, "1", "1")).await;
    let operator = app.operator_key().await;
    let (n, refusal) = served(&app, OPERATOR_ROUTE, &operator).await;
    assert_eq!(n, 1, "the operator key's burst of 1");
    assert_limited(&refusal, "1");
    let partner = app.partner_key().await;
    let (n, _) = served(&app, PARTNER_ROUTE, &partner).await;
    assert_eq!(n, 1, "a partner key keeps its own burst");
    let another_operator = app.operator_key().await;
    let (n, _) = served(&app, OPERATOR_ROUTE, &another_operator).await;
    assert_eq!(n, 1, "another operator key keeps its own burst");
    app.advance(Duration::from_secs(1));
    let (n, _) = served(&app, OPERATOR_ROUTE, &operator).await;
    assert_eq!(n, 1, "one more a second later");
}

// ----- service keys, at ingest -----

#[both_backends]
async fn a_producer_over_its_rate_limit_gets_429_with_retry_after_and_writes_nothing(
    backend: Backend,
) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Service, "1", "1")).await;
    let (n, refusal) = published(&app, &app.service_key).await;
    assert_eq!(n, 1, "the burst of 1 is published");
    assert_limited(&refusal, "1");
    assert_stored_events(&app, 1, "a refused request writes no event").await;
}

#[both_backends]
async fn a_producer_publishes_again_one_event_per_refill(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Service, "1", "1")).await;
    #[rustfmt::skip]
        let steps = [
            (0,   1, "the burst"),
            (500, 0, "half a token after half a second at 1/s"),
            (500, 1, "one event a second after the burst"),
        ];
    expect_refills(&app, &steps, || published(&app, &app.service_key)).await;
    assert_stored_events(&app, 2, "the two events served are stored").await;
}

#[both_backends]
async fn service_keys_have_their_own_budget_that_partner_keys_do_not_spend(backend: Backend) {
    let limits = [
        rate_limit(Limited::Keys, "1", "1"),
        rate_limit(Limited::Service, "3", "3"),
    ]
    .concat();
    let app = spawn_app_with(backend, &limits).await;
    let partner = app.partner_key().await;
    assert_eq!(served(&app, PARTNER_ROUTE, &partner).await.0, 1);
    let (n, _) = published(&app, &app.service_key).await;
    assert_eq!(n, 3, "the service key has the service burst of 3");
    let another = app.key(hookd::store::keys::Role::Service, None).await;
    let (n, _) = published(&app, &another.key).await;
    assert_eq!(n, 3, "another service key has a burst of its own");
}

// ----- requests without a valid key, by address -----

#[both_backends]
async fn requests_without_a_valid_key_are_limited_per_address_with_retry_after(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Anonymous, "1", "2")).await;
    let (n, refusal) = refused_as_unknown(&app).await;
    assert_eq!(n, 2, "the address's burst of 2 failures");
    assert_limited(&refusal, "1");
    app.advance(Duration::from_millis(500));
    let (n, _) = refused_as_unknown(&app).await;
    assert_eq!(n, 0, "half a token after half a second at 1/s");
    app.advance(Duration::from_millis(500));
    let (n, _) = refused_as_unknown(&app).await;
    assert_eq!(n, 1, "one more failure a second after the burst");
}

#[both_backends]
async fn a_valid_key_does_not_spend_its_addresss_budget(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Anonymous, "1", "1")).await;
    let partner = app.partner_key().await;
    for n in 1..=5 {
        let (status, body, _) = app.request("GET", PARTNER_ROUTE, &partner, None).await;
        assert_eq!(status, 200, "request {n} with a valid key: {body}");
    }
    let (n, refusal) = refused_as_unknown(&app).await;
    assert_eq!(n, 1, "the address still has its burst of 1 failure");
    assert_limited(&refusal, "1");
}

/// `GET PARTNER_ROUTE` with `key`, reported by a trusted proxy as coming from `client`.
async fn from_address(app: &TestApp, client: &str, key: &str) -> ApiAnswer {
    let sent = app
        .http
        .get(format!("{}{PARTNER_ROUTE}", app.base_url))
        .insert_header(("authorization", format!("Bearer {key}")))
        .insert_header(("x-forwarded-for", client))
        .send()
        .await;
    read_answer(sent.expect("the request completes")).await
}

#[both_backends]
async fn one_address_over_its_budget_does_not_limit_another(backend: Backend) {
    let trust = [("HOOKD_HTTP__TRUST_PROXY", r#"["127.0.0.0/8"]"#)];
    let limits = [&rate_limit(Limited::Anonymous, "1", "1")[..], &trust].concat();
    let app = spawn_app_with(backend, &limits).await;
    let (n, refusal) = until_429(401, || from_address(&app, "198.51.100.1", WRONG_KEY)).await;
    assert_eq!(n, 1, "the first address's burst of 1 failure");
    assert_limited(&refusal, "1");
    let (n, _) = until_429(401, || from_address(&app, "198.51.100.2", WRONG_KEY)).await;
    assert_eq!(n, 1, "another address has its own burst");
}

/// POSTs `key` to the sign-in form at `path`: status, `Retry-After`, and
/// the page or the session cookie's value.
async fn sign_in(app: &TestApp, path: &str, key: &str) -> (u16, Option<String>, String) {
    let mut res = awc::Client::builder()
        .disable_redirects()
        .finish()
        .post(format!("{}{path}", app.base_url))
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .insert_header(("origin", app.base_url.as_str()))
        .send_body(format!("key={key}"))
        .await
        .expect("the sign-in completes");
    let retry_after = header(res.headers(), "retry-after").map(str::to_string);
    let cookie = header(res.headers(), "set-cookie")
        .and_then(|v| actix_web::cookie::Cookie::parse(v).ok())
        .map(|c| c.value().to_string());
    let body = res.body().await.expect("a body");
    let page = String::from_utf8_lossy(&body).into_owned();
    (res.status().as_u16(), retry_after, cookie.unwrap_or(page))
}

#[both_backends]
async fn failed_sign_ins_spend_the_address_budget_until_the_clock_refills_it(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Anonymous, "1", "2")).await;
    let operator = app.operator_key().await;
    for n in 1..=2 {
        let (status, _, page) = sign_in(&app, "/dashboard/login", WRONG_KEY).await;
        assert_eq!(
            status, 401,
            "failed sign-in {n} is within the burst: {page}"
        );
    }
    let (status, retry_after, page) = sign_in(&app, "/dashboard/login", &operator).await;
    assert_eq!(status, 429, "past the burst even a good key waits: {page}");
    assert_eq!(retry_after.as_deref(), Some("1"), "{page}");
    assert!(page.contains("Too many tries; wait 1 s."), "{page}");
    app.advance(Duration::from_secs(1));
    let (status, _, page) = sign_in(&app, "/dashboard/login", &operator).await;
    assert_eq!(status, 303, "a second later the operator signs in: {page}");
}

// ----- the portal, per session's key -----

#[both_backends]
async fn a_portal_session_over_its_keys_limit_gets_a_429_page_with_retry_after(backend: Backend) {
    let app = spawn_app_with(backend, &rate_limit(Limited::Keys, "1", "1")).await;
    let key = app.partner_key().await;
    let (status, _, session) = sign_in(&app, "/portal/login", &key).await;
    assert_eq!(status, 303, "the partner key signs in: {session}");
    let home = || async {
        let res = app
            .http
            .get(format!("{}/portal", app.base_url))
            .insert_header(("cookie", format!("hookd_portal={session}")))
            .send()
            .await
            .expect("the portal answers");
        let retry_after = header(res.headers(), "retry-after").map(str::to_string);
        (res.status().as_u16(), retry_after)
    };
    assert_eq!(home().await, (200, None), "the burst of 1");
    assert_eq!(
        home().await,
        (429, Some("1".to_string())),
        "the next page waits a second"
    );
    app.advance(Duration::from_secs(1));
    assert_eq!(home().await, (200, None), "and is served a second later");
}
