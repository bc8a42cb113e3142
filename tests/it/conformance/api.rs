//! The check through the Partner API: `POST /v1/endpoints/{id}/check`
//! answers the scorecard and stores it, `GET …/checks` lists them newest
//! first; once a minute per endpoint, across instances, and once a minute
//! per target host, whichever endpoint names it; nothing of it is another
//! partner's to see.

use std::time::Duration;

use actix_web::web;
use serde_json::Value;

use super::{Behaviour, Inbox, endpoint_with_receiver};
use crate::harness::{self, Backend, TestApp, answer::header, spawn_app};
use hookd_test_macros::both_backends;

/// An endpoint of the test partner on a correct receiver, checked once
/// through the API (which answered 200).
struct Checked {
    app: TestApp,
    key: String,
    id: String,
    inbox: web::Data<Inbox>,
    /// What the check answered.
    card: Value,
}

impl Checked {
    async fn once(backend: Backend) -> Checked {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let (id, inbox) = endpoint_with_receiver(&app, Behaviour::Correct).await;
        let mut checked = Checked {
            app,
            key,
            id,
            inbox,
            card: Value::Null,
        };
        let (status, card) = checked.check().await;
        assert_eq!(status, 200, "{card}");
        checked.card = card;
        checked
    }

    /// `POST /v1/endpoints/{id}/check` with the partner's key.
    async fn check(&self) -> (u16, Value) {
        let path = format!("/v1/endpoints/{}/check", self.id);
        let (status, body, _) = self.app.request("POST", &path, &self.key, None).await;
        (status, body)
    }

    /// `GET /v1/endpoints/{id}/checks{query}`, which must answer 200.
    async fn list(&self, query: &str) -> Value {
        let path = format!("/v1/endpoints/{}/checks{query}", self.id);
        let (status, list, _) = self.app.request("GET", &path, &self.key, None).await;
        assert_eq!(status, 200, "{list}");
        list
    }
}

#[both_backends]
async fn the_api_check_answers_a_passing_scorecard_of_eight_cases(backend: Backend) {
    let Checked { card, id, .. } = Checked::once(backend).await;
    assert_eq!(card["passed"], true, "{card}");
    assert_eq!(card["endpoint_id"], id.as_str());
    let cases = card["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 8);
    for c in cases {
        let mut keys: Vec<&String> = c.as_object().expect("a case").keys().collect();
        keys.sort();
        assert_eq!(keys, ["expected", "got", "hint", "name", "passed"], "{c}");
    }
    let check_id = card["id"].as_str().expect("an id");
    assert!(check_id.starts_with("chk_"), "{check_id}");
    assert!(
        card["checked_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
}

#[both_backends]
async fn an_api_check_reaches_the_receiver_once_per_case_and_no_business_handler(backend: Backend) {
    let Checked { inbox, .. } = Checked::once(backend).await;
    assert_eq!(inbox.requests(), 8);
    assert!(inbox.applied_nothing(), "no business handler ran");
}

#[both_backends]
async fn an_api_checks_scorecard_is_stored_and_listed(backend: Backend) {
    let checked = Checked::once(backend).await;
    let list = checked.list("").await;
    assert_eq!(list["data"][0]["id"], checked.card["id"], "{list}");
    assert_eq!(
        list["data"][0]["cases"], checked.card["cases"],
        "the stored scorecard"
    );
    assert_eq!(list["data"][0]["passed"], true);
    assert_eq!(list["next_cursor"], Value::Null);
}

#[both_backends]
async fn checks_are_listed_newest_first_a_page_at_a_time(backend: Backend) {
    let checked = Checked::once(backend).await;
    // A minute later a second check may run.
    checked.app.advance(Duration::from_secs(61));
    let (status, second) = checked.check().await;
    assert_eq!(status, 200, "{second}");
    let page = checked.list("?limit=1").await;
    assert_eq!(page["data"][0]["id"], second["id"], "newest first: {page}");
    let cursor = page["next_cursor"].as_str().expect("a next page");
    let page = checked.list(&format!("?limit=1&after={cursor}")).await;
    assert_eq!(page["data"][0]["id"], checked.card["id"], "{page}");
}

/// The refusal says to come back in about 30 s.
fn assert_retry_in_about_30_s(headers: &awc::http::header::HeaderMap) {
    let retry: u64 = header(headers, "retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After");
    assert!(
        (29..=31).contains(&retry),
        "retry in about 30 s, got {retry}"
    );
}

#[both_backends]
async fn a_second_check_within_a_minute_is_refused_with_retry_after_and_sends_nothing(
    backend: Backend,
) {
    let checked = Checked::once(backend).await;
    checked.app.advance(Duration::from_secs(30));
    let path = format!("/v1/endpoints/{}/check", checked.id);
    let (status, refused, headers) = checked.app.request("POST", &path, &checked.key, None).await;
    assert_eq!(status, 429, "{refused}");
    assert_retry_in_about_30_s(&headers);
    assert_eq!(checked.inbox.requests(), 8, "nothing was sent again");
}

#[both_backends]
async fn another_endpoint_on_the_same_host_is_checked_a_minute_later_and_not_sooner(
    backend: Backend,
) {
    let checked = Checked::once(backend).await;
    // Another receiver, on another port of the same host (127.0.0.1).
    let (other, inbox) = endpoint_with_receiver(&checked.app, Behaviour::Correct).await;
    checked.app.advance(Duration::from_secs(30));
    let path = format!("/v1/endpoints/{other}/check");
    let (status, refused, headers) = checked.app.request("POST", &path, &checked.key, None).await;
    assert_eq!(status, 429, "the host was checked 30 s ago: {refused}");
    assert_retry_in_about_30_s(&headers);
    assert!(
        refused["detail"]
            .as_str()
            .is_some_and(|d| d.contains("a receiver on 127.0.0.1")),
        "the refusal names the host: {refused}"
    );
    assert_eq!(inbox.requests(), 0, "nothing was sent to the host again");
    checked.app.advance(Duration::from_secs(30));
    let (status, card, _) = checked.app.request("POST", &path, &checked.key, None).await;
    assert_eq!(
        status, 200,
        "a minute after the host's last check, and the refusal spent no slot of the endpoint: {card}"
    );
    assert_eq!(inbox.requests(), 8, "the suite, once");
}

/// The limit is in the database: another instance refuses too (SQLite
/// takes one instance, so this runs on PostgreSQL only).
#[hookd_test_macros::test]
async fn the_once_a_minute_limit_holds_on_another_instance() {
    if harness::skip_postgres() {
        return;
    }
    let checked = Checked::once(Backend::Postgres).await;
    checked.app.advance(Duration::from_secs(30));
    let other = harness::another_instance(&checked.app, &[]).await;
    let (status, _, _) = harness::call_raw(
        &checked.app.http,
        &format!("http://{}", other.addr),
        "POST",
        &format!("/v1/endpoints/{}/check", checked.id),
        &checked.key,
        None,
    )
    .await;
    assert_eq!(status, 429, "the second instance keeps the limit");
    assert_eq!(checked.inbox.requests(), 8, "nothing was sent again");
    harness::quiesce().await;
}

#[both_backends]
async fn another_partner_can_neither_check_an_endpoint_nor_list_its_checks(backend: Backend) {
    let checked = Checked::once(backend).await;
    let (_, stranger) = checked.app.another_partner("Other").await;
    checked.app.advance(Duration::from_secs(60));
    let check = format!("/v1/endpoints/{}/check", checked.id);
    for (method, path) in [("POST", check.clone()), ("GET", format!("{check}s"))] {
        let (status, body, _) = checked.app.request(method, &path, &stranger, None).await;
        assert_eq!(status, 404, "{method} {path} of another partner: {body}");
        assert!(!body.to_string().contains("chk_"), "{body}");
    }
    assert_eq!(checked.inbox.requests(), 8, "the stranger sent nothing");
}

#[both_backends]
async fn the_checks_of_an_unknown_endpoint_are_a_404(app: TestApp) {
    let key = app.partner_key().await;
    let (status, body, _) = app
        .request("GET", "/v1/endpoints/ep_nope/checks", &key, None)
        .await;
    assert_eq!(status, 404, "{body}");
}

#[hookd_test_macros::test]
async fn the_api_check_goes_through_the_egress_proxy() {
    use crate::harness::tinyproxy::{Setup, Tinyproxy};
    let Some(proxy) = Tinyproxy::start(Setup {
        listen: "127.0.0.6".parse().unwrap(),
        bind: "127.0.0.7".parse().unwrap(),
        basic_auth: None,
    })
    .await
    else {
        return;
    };
    let url = proxy.url(None);
    let app =
        harness::spawn_app_with(Backend::Sqlite, &[("HOOKD_EGRESS__PROXY", url.as_str())]).await;
    let key = app.partner_key().await;
    let (id, inbox) = endpoint_with_receiver(&app, Behaviour::Correct).await;
    let path = format!("/v1/endpoints/{id}/check");
    let (status, card, _) = app.request("POST", &path, &key, None).await;
    assert_eq!(status, 200, "{card}");
    assert_eq!(card["passed"], true, "{card}");
    assert!(inbox.requests() > 0);
    let asked = proxy.connects();
    assert!(
        !asked.is_empty() && asked.iter().all(|t| t.starts_with("127.0.0.1:")),
        "every case went through the proxy to the receiver: {asked:?}"
    );
    harness::quiesce().await;
}
