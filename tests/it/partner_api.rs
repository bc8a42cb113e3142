//! The Partner API end to end: endpoints and their secrets, problem+json for
//! every kind of bad input, replays and recovery, test events, the delivery
//! search and the event feed under concurrent writers, the catalog, the
//! operator routes, rate limits and keys.

use std::{
    cell::{Cell, RefCell},
    collections::{HashMap, HashSet},
    time::Duration,
};

use hookd::{
    domain::{clock::Clock as _, event::format_time},
    secret::Secret,
    signing,
};
use serde_json::{Value, json};

use crate::harness::{
    ApiAnswer, Backend, TestApp, another_instance, call_raw,
    receiver::{Received, Receiver, Reply},
    spawn_app, spawn_app_with, wait_until,
};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

/// Generous rate limits, for tests that send many requests with one key.
const NO_RATE_LIMIT: [(&str, &str); 2] = [
    ("HOOKD_API__RATE_LIMIT_PER_SECOND", "100000"),
    ("HOOKD_API__RATE_LIMIT_BURST", "100000"),
];

fn content_type(answer: &ApiAnswer) -> &str {
    answer
        .2
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The answer is a problem+json `status` of type `…/kind`; returns its body.
#[track_caller]
fn expect_problem(answer: &ApiAnswer, status: u16, kind: &str) -> Value {
    let (got, body, _) = answer;
    assert_eq!(
        *got, status,
        "expected a {status} `{kind}` problem, got: {body}"
    );
    assert_eq!(
        content_type(answer),
        "application/problem+json",
        "a {status} must be application/problem+json: {body}"
    );
    let t = body["type"].as_str().unwrap_or_default();
    assert!(
        t.ends_with(&format!("/{kind}")),
        "expected a problem of type …/{kind}, got `{t}`: {body}"
    );
    assert_eq!(
        body["status"], status,
        "the problem repeats its status: {body}"
    );
    body.clone()
}

#[track_caller]
fn expect_status(answer: &ApiAnswer, status: u16) -> Value {
    assert_eq!(answer.0, status, "unexpected answer: {}", answer.1);
    answer.1.clone()
}

/// Creates an endpoint over the API: (id, secret).
async fn create_endpoint(app: &TestApp, key: &str, body: Value) -> (String, Secret) {
    let answer = app.request("POST", "/v1/endpoints", key, Some(&body)).await;
    let created = expect_status(&answer, 201);
    let secret = created["secret"]
        .as_str()
        .unwrap_or_else(|| panic!("a new endpoint comes with its secret: {created}"));
    (
        created["id"].as_str().expect("an endpoint id").to_string(),
        Secret::parse(secret).expect("the secret is a whsec_ string"),
    )
}

async fn endpoint_count(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM endpoint").await
}

async fn delivery_count(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM delivery").await
}

/// The id of the one delivery of `event` (to `endpoint`), found over the API.
async fn delivery_id(app: &TestApp, key: &str, event: &str, endpoint: &str) -> String {
    let path = format!("/v1/deliveries?event_id={event}&endpoint_id={endpoint}");
    let page = expect_status(&app.request("GET", &path, key, None).await, 200);
    let data = page["data"].as_array().expect("a data array");
    assert_eq!(
        data.len(),
        1,
        "one delivery of {event} to {endpoint}: {page}"
    );
    data[0]["id"].as_str().expect("a delivery id").to_string()
}

/// Waits until the delivery shows `n` recorded attempts over the API; returns it.
///
/// The answer reads the delivery and then its attempts: an attempt recorded
/// in between shows in the list before the count, so both must have it.
async fn delivery_with_attempts(app: &TestApp, key: &str, id: &str, n: usize) -> Value {
    wait_until(WAIT, || async {
        let (status, body, _) = app
            .request("GET", &format!("/v1/deliveries/{id}"), key, None)
            .await;
        let counted = body["attempt_count"]
            .as_u64()
            .is_some_and(|c| c >= n as u64);
        let listed = body["attempts"].as_array().is_some_and(|a| a.len() >= n);
        (status == 200 && counted && listed).then_some(body)
    })
    .await
    .unwrap_or_else(|| panic!("delivery {id} did not show {n} attempt(s) within {WAIT:?}"))
}

/// No further request arrives within a short while (the engine polls every 50 ms).
async fn stays_at(receiver: &Receiver, n: usize) {
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        receiver.count(),
        n,
        "no further request should have arrived"
    );
}

fn signature_entries(r: &Received) -> Vec<String> {
    r.header("webhook-signature")
        .unwrap_or("")
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect()
}

/// Whether a receiver holding only `secret` accepts the request at `now_ms`.
fn verifies(secret: &Secret, r: &Received, now_ms: i64) -> bool {
    signing::verify(
        secret,
        r.header("webhook-id").unwrap_or(""),
        r.header("webhook-timestamp").unwrap_or(""),
        r.header("webhook-signature").unwrap_or(""),
        &r.body,
        now_ms / 1000,
        300,
    )
    .is_ok()
}

fn ids_of(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a page has a data array: {page}"))
        .iter()
        .map(|d| d["id"].as_str().expect("an id").to_string())
        .collect()
}

// ----- endpoints -----

on_both_backends!(
    an_endpoint_is_created_read_changed_paused_and_deleted_and_only_creation_shows_its_secret,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;

        let created = app
            .request(
                "POST",
                "/v1/endpoints",
                &key,
                Some(
                    &json!({"url": format!("{}/hooks", receiver.url()), "description": "billing",
                    "event_types": ["usage.*", "balance.updated"], "schema_version": "1",
                    "concurrency": 4, "rate_limit": 20}),
                ),
            )
            .await;
        let endpoint = expect_status(&created, 201);
        let id = endpoint["id"].as_str().expect("an id").to_string();
        let secret = endpoint["secret"].as_str().expect("the secret, this once");
        assert!(
            secret.starts_with("whsec_") && Secret::parse(secret).is_ok(),
            "the secret is a whsec_ string: {secret}"
        );
        assert_eq!(endpoint["url"], format!("{}/hooks", receiver.url()));
        assert_eq!(endpoint["description"], "billing");
        assert_eq!(
            endpoint["event_types"],
            json!(["usage.*", "balance.updated"])
        );
        assert_eq!(endpoint["schema_version"], "1");
        assert_eq!(endpoint["concurrency"], 4);
        assert_eq!(endpoint["rate_limit"], 20);
        assert_eq!(endpoint["status"], "active", "an endpoint starts active");
        app.advance(Duration::from_secs(1));

        let paused = app
            .request(
                "POST",
                "/v1/endpoints",
                &key,
                Some(&json!({"url": receiver.url(), "status": "paused"})),
            )
            .await;
        let paused = expect_status(&paused, 201);
        assert_eq!(
            paused["status"], "paused",
            "`status: paused` creates it paused"
        );
        assert_eq!(
            paused["concurrency"], 8,
            "the concurrency defaults from the configuration"
        );
        let paused_id = paused["id"].as_str().expect("an id").to_string();

        let mut shown: Vec<(&str, ApiAnswer)> = Vec::new();
        let one = app
            .request("GET", &format!("/v1/endpoints/{id}"), &key, None)
            .await;
        assert_eq!(expect_status(&one, 200)["description"], "billing");
        shown.push(("GET one", one));

        let list = app.request("GET", "/v1/endpoints", &key, None).await;
        assert_eq!(
            ids_of(&expect_status(&list, 200)),
            vec![id.clone(), paused_id.clone()],
            "the list holds both, oldest first"
        );
        shown.push(("GET list", list));

        let patched = app
            .request(
                "PATCH",
                &format!("/v1/endpoints/{id}"),
                &key,
                Some(&json!({"description": "billing v2", "concurrency": 2, "event_types": []})),
            )
            .await;
        let body = expect_status(&patched, 200);
        assert_eq!(body["description"], "billing v2");
        assert_eq!(body["concurrency"], 2);
        assert_eq!(body["event_types"], json!([]));
        assert_eq!(
            body["url"],
            format!("{}/hooks", receiver.url()),
            "what the patch leaves out stays"
        );
        shown.push(("PATCH", patched));

        let disabled = app
            .request("POST", &format!("/v1/endpoints/{id}/disable"), &key, None)
            .await;
        assert_eq!(expect_status(&disabled, 200)["status"], "disabled");
        shown.push(("disable", disabled));
        let enabled = app
            .request(
                "POST",
                &format!("/v1/endpoints/{paused_id}/enable"),
                &key,
                None,
            )
            .await;
        assert_eq!(
            expect_status(&enabled, 200)["status"],
            "active",
            "enabling a paused endpoint makes it active"
        );
        shown.push(("enable", enabled));
        let again = app
            .request("GET", &format!("/v1/endpoints/{id}"), &key, None)
            .await;
        assert_eq!(expect_status(&again, 200)["status"], "disabled");
        shown.push(("GET after disable", again));

        for (what, (_, body, _)) in &shown {
            assert!(
                !body.to_string().contains("whsec_"),
                "{what} must not contain a secret: {body}"
            );
        }

        let deleted = app
            .request("DELETE", &format!("/v1/endpoints/{id}"), &key, None)
            .await;
        assert_eq!(deleted.0, 204, "delete answers 204: {}", deleted.1);
        expect_problem(
            &app.request("GET", &format!("/v1/endpoints/{id}"), &key, None)
                .await,
            404,
            "not-found",
        );
        expect_problem(
            &app.request("DELETE", &format!("/v1/endpoints/{id}"), &key, None)
                .await,
            404,
            "not-found",
        );
        assert_eq!(
            ids_of(&expect_status(
                &app.request("GET", "/v1/endpoints", &key, None).await,
                200
            )),
            vec![paused_id]
        );
    }
);

on_both_backends!(
    an_endpoint_with_deliveries_can_be_deleted,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let (id, _) = create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
        let event = app.publish("a.b", json!({})).await;
        app.wait_for_state(&event, &id, "delivered", WAIT).await;
        let deleted = app
            .request("DELETE", &format!("/v1/endpoints/{id}"), &key, None)
            .await;
        assert_eq!(
            deleted.0, 204,
            "deleting an endpoint with deliveries works: {}",
            deleted.1
        );
        assert_eq!(
            app.count(&format!(
                "SELECT COUNT(*) AS n FROM delivery WHERE endpoint_id = '{id}'"
            ))
            .await,
            0,
            "its deliveries go with it"
        );
    }
);

on_both_backends!(
    a_callback_url_outside_the_egress_policy_is_refused,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        for url in [
            "https://10.0.0.1/x",
            "ftp://x",
            "http://169.254.169.254/latest",
            "not a url",
        ] {
            let answer = app
                .request("POST", "/v1/endpoints", &key, Some(&json!({"url": url})))
                .await;
            let body = expect_problem(&answer, 422, "invalid-url");
            assert_eq!(body["field"], "url", "{url}: the problem names the field");
        }
        assert_eq!(endpoint_count(&app).await, 0, "no endpoint was written");
    }
);

// ----- errors -----

/// What is wrong with an answer that should be a `status` problem of type
/// `…/kind` naming `field` (if given); `None` when it is right.
fn problem_mismatch(
    answer: &ApiAnswer,
    status: u16,
    kind: &str,
    field: Option<&str>,
) -> Option<String> {
    let (got, body, _) = answer;
    let t = body["type"].as_str().unwrap_or_default();
    let mut wrong = Vec::new();
    if *got != status {
        wrong.push(format!("status {got}, not {status}"));
    }
    if !t.ends_with(&format!("/{kind}")) {
        wrong.push(format!("type `{t}`, not …/{kind}"));
    }
    if content_type(answer) != "application/problem+json" {
        wrong.push(format!("content-type `{}`", content_type(answer)));
    }
    if let Some(f) = field
        && body["field"] != f
    {
        wrong.push(format!("field {}, not `{f}`", body["field"]));
    }
    (!wrong.is_empty()).then(|| format!("{}: {body}", wrong.join(", ")))
}

/// (method, path, body as sent, status, problem type, field).
type BadInput<'a> = (&'a str, &'a str, String, u16, &'a str, Option<&'a str>);

on_both_backends!(
    each_kind_of_bad_input_gets_its_own_problem_and_nothing_is_half_written,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let url = receiver.url();
        let (id, _) =
            create_endpoint(&app, &key, json!({"url": url, "description": "before"})).await;
        let before = endpoint_count(&app).await;
        let path = format!("/v1/endpoints/{id}");
        let mut wrong: Vec<String> = Vec::new();

        let bodies: Vec<BadInput> = vec![
            (
                "POST",
                "/v1/endpoints",
                r#"{"url": "#.into(),
                400,
                "malformed-json",
                None,
            ),
            (
                "POST",
                "/v1/endpoints",
                "{url: 1}".into(),
                400,
                "malformed-json",
                None,
            ),
            (
                "POST",
                "/v1/endpoints",
                "[1, 2".into(),
                400,
                "malformed-json",
                None,
            ),
            (
                "POST",
                "/v1/endpoints",
                format!(r#"{{"url": "{url}"}} x"#),
                400,
                "malformed-json",
                None,
            ),
            (
                "POST",
                "/v1/endpoints",
                json!([url]).to_string(),
                422,
                "invalid-type",
                None,
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": url, "colour": "red"}).to_string(),
                422,
                "unknown-field",
                Some("colour"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": 5}).to_string(),
                422,
                "invalid-type",
                Some("url"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": url, "concurrency": "8"}).to_string(),
                422,
                "invalid-type",
                Some("concurrency"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": url, "event_types": "usage.*"}).to_string(),
                422,
                "invalid-type",
                Some("event_types"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": "https://10.0.0.1/x"}).to_string(),
                422,
                "invalid-url",
                Some("url"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": "ftp://x"}).to_string(),
                422,
                "invalid-url",
                Some("url"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": url, "concurrency": 0}).to_string(),
                422,
                "out-of-range",
                Some("concurrency"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": url, "concurrency": 257}).to_string(),
                422,
                "out-of-range",
                Some("concurrency"),
            ),
            (
                "POST",
                "/v1/endpoints",
                json!({"url": url, "rate_limit": 10001}).to_string(),
                422,
                "out-of-range",
                Some("rate_limit"),
            ),
            (
                "PATCH",
                &path,
                r#"{"description": "#.into(),
                400,
                "malformed-json",
                None,
            ),
            (
                "PATCH",
                &path,
                json!({"description": "after", "concurrency": 0}).to_string(),
                422,
                "out-of-range",
                Some("concurrency"),
            ),
            (
                "PATCH",
                &path,
                json!({"description": "after", "url": "https://10.0.0.1/x"}).to_string(),
                422,
                "invalid-url",
                Some("url"),
            ),
            (
                "PATCH",
                &path,
                json!({"description": "after", "colour": 1}).to_string(),
                422,
                "unknown-field",
                Some("colour"),
            ),
            (
                "PATCH",
                &path,
                json!({"description": 7}).to_string(),
                422,
                "invalid-type",
                Some("description"),
            ),
        ];
        for (method, target, body, status, kind, field) in &bodies {
            let answer = app.request_raw(method, target, &key, body).await;
            if let Some(w) = problem_mismatch(&answer, *status, kind, *field) {
                wrong.push(format!("{method} {target} {body}: {w}"));
            }
        }

        // Queries: bad cursors, bad values and out-of-range limits, each
        // 422 with the parameter named, as the same value in a body.
        let queries: [(&str, u16, &str, Option<&str>); 8] = [
            (
                "/v1/endpoints?after=garbage",
                422,
                "invalid-cursor",
                Some("after"),
            ),
            (
                "/v1/deliveries?after=garbage",
                422,
                "invalid-cursor",
                Some("after"),
            ),
            (
                "/v1/events?after=garbage",
                422,
                "invalid-cursor",
                Some("after"),
            ),
            (
                "/v1/endpoints?limit=10000",
                422,
                "out-of-range",
                Some("limit"),
            ),
            ("/v1/endpoints?limit=0", 422, "out-of-range", Some("limit")),
            (
                "/v1/deliveries?limit=10000",
                422,
                "out-of-range",
                Some("limit"),
            ),
            ("/v1/events?limit=10000", 422, "out-of-range", Some("limit")),
            (
                "/v1/deliveries?state=lost",
                422,
                "out-of-range",
                Some("state"),
            ),
        ];
        for (target, status, kind, field) in queries {
            let answer = app.request("GET", target, &key, None).await;
            if let Some(w) = problem_mismatch(&answer, status, kind, field) {
                wrong.push(format!("GET {target}: {w}"));
            }
        }
        assert!(
            wrong.is_empty(),
            "these bad inputs got the wrong answer:\n{}",
            wrong.join("\n")
        );

        assert_eq!(
            endpoint_count(&app).await,
            before,
            "no refused request wrote an endpoint"
        );
        let now = expect_status(&app.request("GET", &path, &key, None).await, 200);
        assert_eq!(
            now["description"], "before",
            "no refused change was half-applied: {now}"
        );
        assert_eq!(now["concurrency"], 8);
        assert_eq!(
            now["url"].as_str().map(|u| u.trim_end_matches('/')),
            Some(url.as_str())
        );
    }
);

// ----- secrets -----

on_both_backends!(
    a_receiver_with_the_old_secret_verifies_during_the_overlap_and_not_after_expire_previous,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let (id, old) = create_endpoint(&app, &key, json!({"url": receiver.url()})).await;

        // Secrets are ordered by creation time: rotate a while after creating.
        app.advance(Duration::from_secs(1));
        let rotated = app
            .request(
                "POST",
                &format!("/v1/endpoints/{id}/secret/rotate"),
                &key,
                None,
            )
            .await;
        let rotated = expect_status(&rotated, 200);
        let new = Secret::parse(rotated["secret"].as_str().expect("the new secret"))
            .expect("a whsec_ secret");
        assert_ne!(new.key(), old.key(), "rotation makes a new secret");
        assert_eq!(
            rotated["previous_expires_at"],
            format_time(app.clock.now_ms() + 86_400_000),
            "the default overlap is a day"
        );

        let first = app.publish("a.b", json!({"n": 1})).await;
        let got = receiver
            .wait_for(1, WAIT)
            .await
            .expect("the first event arrives");
        let r = &got[0];
        assert_eq!(r.header("webhook-id"), Some(first.as_str()));
        let entries = signature_entries(r);
        assert_eq!(
            entries.len(),
            2,
            "both secrets sign during the overlap: {entries:?}"
        );
        assert!(entries.iter().all(|e| e.starts_with("v1,")), "{entries:?}");
        let now = app.clock.now_ms();
        assert!(
            verifies(&old, r, now),
            "a receiver with only the old secret still verifies"
        );
        assert!(
            verifies(&new, r, now),
            "a receiver with the new secret verifies"
        );
        let ts: i64 = r
            .header("webhook-timestamp")
            .expect("a timestamp")
            .parse()
            .expect("a number");
        assert_eq!(
            entries[0],
            signing::sign(&new, &first, ts, &r.body),
            "the newest secret signs first"
        );

        let expired = app
            .request(
                "POST",
                &format!("/v1/endpoints/{id}/secret/expire-previous"),
                &key,
                None,
            )
            .await;
        assert_eq!(
            expect_status(&expired, 200)["expired"],
            1,
            "one previous secret ended"
        );

        let second = app.publish("a.b", json!({"n": 2})).await;
        let got = receiver
            .wait_for(2, WAIT)
            .await
            .expect("the second event arrives");
        let r = &got[1];
        assert_eq!(r.header("webhook-id"), Some(second.as_str()));
        let now = app.clock.now_ms();
        assert!(verifies(&new, r, now), "the new secret still verifies");
        assert!(
            !verifies(&old, r, now),
            "after expire-previous the old secret must no longer verify: {:?}",
            signature_entries(r)
        );
        assert_eq!(signature_entries(r).len(), 1);

        let too_long = app
            .request(
                "POST",
                &format!("/v1/endpoints/{id}/secret/rotate"),
                &key,
                Some(&json!({"overlap_seconds": 604_801})),
            )
            .await;
        assert_eq!(
            expect_problem(&too_long, 422, "out-of-range")["field"],
            "overlap_seconds"
        );
        assert_eq!(
            app.count(&format!(
                "SELECT COUNT(*) AS n FROM endpoint_secret WHERE endpoint_id = '{id}'"
            ))
            .await,
            2,
            "a refused rotation makes no secret"
        );
        let missing = app
            .request("POST", "/v1/endpoints/ep_nope/secret/rotate", &key, None)
            .await;
        expect_problem(&missing, 404, "not-found");
    }
);

on_both_backends!(
    an_overlap_ends_by_itself_when_its_time_is_up,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let (id, old) = create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
        let rotated = app
            .request(
                "POST",
                &format!("/v1/endpoints/{id}/secret/rotate"),
                &key,
                Some(&json!({"overlap_seconds": 60})),
            )
            .await;
        let rotated = expect_status(&rotated, 200);
        let new = Secret::parse(rotated["secret"].as_str().expect("a secret")).expect("whsec_");
        assert_eq!(
            rotated["previous_expires_at"],
            format_time(app.clock.now_ms() + 60_000)
        );

        app.publish("a.b", json!({"n": 1})).await;
        let r = receiver.wait_for(1, WAIT).await.expect("the first event")[0].clone();
        let now = app.clock.now_ms();
        assert!(
            verifies(&old, &r, now) && verifies(&new, &r, now),
            "within the overlap both verify"
        );

        app.advance(Duration::from_secs(120));
        app.publish("a.b", json!({"n": 2})).await;
        let r = receiver.wait_for(2, WAIT).await.expect("the second event")[1].clone();
        let now = app.clock.now_ms();
        assert!(verifies(&new, &r, now), "the new secret verifies");
        assert!(
            !verifies(&old, &r, now),
            "60 s after a 60 s overlap the old secret must not verify: {:?}",
            signature_entries(&r)
        );
    }
);

// ----- replay and recovery -----

on_both_backends!(
    a_replay_arrives_with_the_original_id_and_a_fresh_signature,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__SCHEDULE", r#"["0s"]"#)]).await;
        let key = app.partner_key().await;
        let ok = Receiver::start().await;
        let failing = Receiver::start().await;
        failing.set_default(Reply::status(500));
        let (ok_ep, ok_secret) = create_endpoint(
            &app,
            &key,
            json!({"url": ok.url(), "event_types": ["ok.*"]}),
        )
        .await;
        let (dead_ep, dead_secret) = create_endpoint(
            &app,
            &key,
            json!({"url": failing.url(), "event_types": ["dead.*"]}),
        )
        .await;

        // A delivered delivery, replayed.
        let delivered = app.publish("ok.x", json!({"n": 1})).await;
        app.wait_for_state(&delivered, &ok_ep, "delivered", WAIT)
            .await;
        let original = ok.wait_for(1, WAIT).await.expect("the original")[0].clone();
        app.advance(Duration::from_secs(60));
        let id = delivery_id(&app, &key, &delivered, &ok_ep).await;
        let queued = app
            .request("POST", &format!("/v1/deliveries/{id}/replay"), &key, None)
            .await;
        let queued = expect_status(&queued, 202);
        assert_eq!(queued["delivery_id"], id.as_str());
        assert_eq!(queued["event_id"], delivered.as_str());
        assert!(queued["replay_id"].is_string(), "{queued}");
        let replayed = ok.wait_for(2, WAIT).await.expect("the replay arrives")[1].clone();
        assert_eq!(
            replayed.header("webhook-id"),
            Some(delivered.as_str()),
            "a replay keeps the original webhook-id"
        );
        assert_eq!(replayed.body, original.body, "a replay sends the same body");
        let ts = |r: &Received| -> i64 {
            r.header("webhook-timestamp")
                .expect("a timestamp")
                .parse()
                .expect("a number")
        };
        assert_eq!(
            ts(&replayed),
            ts(&original) + 60,
            "a replay is stamped with the time it is sent"
        );
        assert_ne!(
            replayed.header("webhook-signature"),
            original.header("webhook-signature")
        );
        assert!(
            verifies(&ok_secret, &replayed, app.clock.now_ms()),
            "the replay's fresh signature verifies now"
        );
        let detail = delivery_with_attempts(&app, &key, &id, 2).await;
        let attempts = detail["attempts"].as_array().expect("attempts");
        assert_eq!(attempts.len(), 2, "{detail}");
        assert_eq!(attempts[0]["trigger"], "scheduled");
        assert_eq!(
            attempts[1]["trigger"], "manual",
            "the replay is a manual attempt"
        );
        assert_eq!(attempts[1]["status_code"], 200);
        assert_eq!(detail["state"], "delivered");

        // A dead delivery, replayed while the receiver still fails: it stays dead.
        let dead = app.publish("dead.x", json!({"n": 2})).await;
        assert_eq!(app.wait_for_state(&dead, &dead_ep, "dead", WAIT).await, 1);
        app.advance(Duration::from_secs(60));
        let id = delivery_id(&app, &key, &dead, &dead_ep).await;
        let queued = app
            .request("POST", &format!("/v1/deliveries/{id}/replay"), &key, None)
            .await;
        expect_status(&queued, 202);
        let got = failing
            .wait_for(2, WAIT)
            .await
            .expect("the replay of a dead delivery arrives");
        assert_eq!(got[1].header("webhook-id"), Some(dead.as_str()));
        assert_eq!(ts(&got[1]), ts(&got[0]) + 60);
        assert!(verifies(&dead_secret, &got[1], app.clock.now_ms()));
        let detail = delivery_with_attempts(&app, &key, &id, 2).await;
        let attempts = detail["attempts"].as_array().expect("attempts");
        assert_eq!(attempts[1]["trigger"], "manual");
        assert_eq!(attempts[1]["status_code"], 500);
        assert_eq!(
            detail["state"], "dead",
            "a failed manual attempt leaves a dead delivery dead: {detail}"
        );

        // The same dead delivery, replayed once the receiver is back.
        failing.set_default(Reply::status(200));
        app.advance(Duration::from_secs(60));
        expect_status(
            &app.request("POST", &format!("/v1/deliveries/{id}/replay"), &key, None)
                .await,
            202,
        );
        let got = failing
            .wait_for(3, WAIT)
            .await
            .expect("the second replay arrives");
        assert_eq!(got[2].header("webhook-id"), Some(dead.as_str()));
        assert!(verifies(&dead_secret, &got[2], app.clock.now_ms()));
        let detail = delivery_with_attempts(&app, &key, &id, 3).await;
        assert_eq!(detail["attempts"][2]["trigger"], "manual");
        assert_eq!(detail["attempts"][2]["status_code"], 200);

        // Another partner cannot replay it, nor can anyone replay what does not exist.
        let (_, stranger) = app.another_partner("Stranger").await;
        for (k, path) in [
            (&stranger, format!("/v1/deliveries/{id}/replay")),
            (&key, "/v1/deliveries/dlv_nope/replay".to_string()),
        ] {
            expect_problem(&app.request("POST", &path, k, None).await, 404, "not-found");
        }
        stays_at(&failing, 3).await;
    }
);

on_both_backends!(
    a_failed_replay_of_a_retrying_delivery_costs_it_none_of_its_scheduled_attempts,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "5s", "5m"]"#),
                ("HOOKD_DELIVERY__JITTER", "0"),
            ],
        )
        .await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::status(500));
        let (endpoint, _) = create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
        let event = app.publish("a.b", json!({})).await;
        app.wait_for_state(&event, &endpoint, "failed", WAIT).await;
        let id = delivery_id(&app, &key, &event, &endpoint).await;
        let before = delivery_with_attempts(&app, &key, &id, 1).await;

        expect_status(
            &app.request("POST", &format!("/v1/deliveries/{id}/replay"), &key, None)
                .await,
            202,
        );
        let after = delivery_with_attempts(&app, &key, &id, 2).await;
        assert_eq!(after["attempts"][1]["trigger"], "manual");
        assert_eq!(
            after["state"], "failed",
            "a failed replay leaves the delivery failed"
        );
        assert_eq!(
            after["next_attempt_at"], before["next_attempt_at"],
            "a failed replay leaves the next scheduled attempt where it was"
        );

        // The schedule's second attempt (after 5 s) fails: the third (after
        // 5 min) must still come, as if there had been no replay.
        app.advance(Duration::from_secs(6));
        let detail = delivery_with_attempts(&app, &key, &id, 3).await;
        assert_eq!(detail["attempts"][2]["trigger"], "scheduled");
        assert_eq!(
            detail["state"], "failed",
            "after 2 of its 3 scheduled attempts the delivery must still be retrying, \
             the manual attempt must not count against its schedule: {detail}"
        );
        assert_eq!(
            detail["next_attempt_at"],
            format_time(app.clock.now_ms() + 300_000),
            "the third scheduled attempt follows the 5 min step"
        );
        app.advance(Duration::from_secs(301));
        assert_eq!(
            app.wait_for_state(&event, &endpoint, "dead", WAIT).await,
            4,
            "dead after its three scheduled attempts and the manual one"
        );
    }
);

on_both_backends!(
    recover_replays_every_failed_or_dead_delivery_of_the_endpoint_in_the_window,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1h"]"#),
                ("HOOKD_DELIVERY__JITTER", "0"),
            ],
        )
        .await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let other = Receiver::start().await;
        other.set_default(Reply::status(500));
        let (id, _) = create_endpoint(
            &app,
            &key,
            json!({"url": receiver.url(), "event_types": ["a.*"]}),
        )
        .await;
        let (other_id, _) = create_endpoint(
            &app,
            &key,
            json!({"url": other.url(), "event_types": ["z.z"]}),
        )
        .await;
        let start = app.clock.now_ms();

        let delivered = app.publish("a.b", json!({"n": 0})).await;
        app.wait_for_state(&delivered, &id, "delivered", WAIT).await;
        receiver.set_default(Reply::status(500));
        let dead = app.publish("a.b", json!({"n": 1})).await;
        app.wait_for_state(&dead, &id, "failed", WAIT).await;
        app.advance(Duration::from_secs(3600));
        app.wait_for_state(&dead, &id, "dead", WAIT).await;
        let failed = app.publish("a.b", json!({"n": 2})).await;
        app.wait_for_state(&failed, &id, "failed", WAIT).await;
        // Another endpoint's failure is not this endpoint's to recover.
        let elsewhere = app.publish("z.z", json!({"n": 3})).await;
        app.wait_for_state(&elsewhere, &other_id, "failed", WAIT)
            .await;
        app.advance(Duration::from_secs(1));
        let before = receiver
            .wait_for(4, WAIT)
            .await
            .expect("four attempts so far")
            .len();
        assert_eq!(before, 4);

        let path = format!("/v1/endpoints/{id}/recover");
        let empty = app
            .request(
                "POST",
                &path,
                &key,
                Some(&json!({"since": format_time(app.clock.now_ms() - 500)})),
            )
            .await;
        assert_eq!(
            expect_status(&empty, 202)["replayed"],
            0,
            "nothing failed in the last half second"
        );

        receiver.set_default(Reply::status(200));
        let answer = app
            .request(
                "POST",
                &path,
                &key,
                Some(&json!({"since": format_time(start - 60_000)})),
            )
            .await;
        assert_eq!(
            expect_status(&answer, 202)["replayed"],
            2,
            "the dead and the failed delivery are replayed, not the delivered one"
        );
        let got = receiver
            .wait_for(6, WAIT)
            .await
            .expect("both replays arrive");
        let replayed: HashSet<&str> = got[4..]
            .iter()
            .filter_map(|r| r.header("webhook-id"))
            .collect();
        assert_eq!(replayed, HashSet::from([dead.as_str(), failed.as_str()]));
        stays_at(&receiver, 6).await;
        assert_eq!(other.count(), 1, "the other endpoint got no replay");
        for event in [&dead, &failed] {
            let d = delivery_id(&app, &key, event, &id).await;
            let detail = delivery_with_attempts(&app, &key, &d, 1).await;
            let attempts = detail["attempts"].as_array().expect("attempts");
            assert_eq!(
                attempts.last().expect("an attempt")["trigger"],
                "manual",
                "{detail}"
            );
        }

        let now = app.clock.now_ms();
        let too_old = app
            .request(
                "POST",
                &path,
                &key,
                Some(&json!({"since": format_time(now - 31 * 86_400_000)})),
            )
            .await;
        assert_eq!(
            expect_problem(&too_old, 422, "out-of-range")["field"],
            "since"
        );
        let backwards = app
            .request(
                "POST",
                &path,
                &key,
                Some(&json!({"since": format_time(now - 60_000), "until": format_time(now - 60_000)})),
            )
            .await;
        assert_eq!(
            expect_problem(&backwards, 422, "out-of-range")["field"],
            "until"
        );
        let backwards = app
            .request(
                "POST",
                &path,
                &key,
                Some(&json!({"since": format_time(now - 60_000), "until": format_time(now - 120_000)})),
            )
            .await;
        assert_eq!(
            expect_problem(&backwards, 422, "out-of-range")["field"],
            "until"
        );
        let not_a_time = app
            .request("POST", &path, &key, Some(&json!({"since": "yesterday"})))
            .await;
        assert_eq!(
            expect_problem(&not_a_time, 422, "invalid-type")["field"],
            "since"
        );
        stays_at(&receiver, 6).await;
    }
);

// ----- test events -----

on_both_backends!(
    a_test_event_reaches_only_the_endpoint_it_was_sent_to,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let target = Receiver::start().await;
        let sibling = Receiver::start().await;
        let (id, secret) = create_endpoint(&app, &key, json!({"url": target.url()})).await;
        let (sibling_id, _) = create_endpoint(&app, &key, json!({"url": sibling.url()})).await;

        let sent = app
            .request("POST", &format!("/v1/endpoints/{id}/test"), &key, None)
            .await;
        let sent = expect_status(&sent, 202);
        let event = sent["event_id"].as_str().expect("an event id").to_string();
        let delivery = sent["delivery_id"]
            .as_str()
            .expect("a delivery id")
            .to_string();

        let got = target
            .wait_for(1, WAIT)
            .await
            .expect("the test event arrives");
        assert_eq!(got[0].header("webhook-id"), Some(event.as_str()));
        assert!(verifies(&secret, &got[0], app.clock.now_ms()));
        let body: Value = serde_json::from_slice(&got[0].body).expect("a JSON envelope");
        assert_eq!(body["type"], "webhook.test");
        assert_eq!(body["partner_id"], app.partner_id.as_str());
        app.wait_for_state(&event, &id, "delivered", WAIT).await;
        let detail = expect_status(
            &app.request("GET", &format!("/v1/deliveries/{delivery}"), &key, None)
                .await,
            200,
        );
        assert_eq!(detail["endpoint_id"], id.as_str());
        assert_eq!(detail["event_type"], "webhook.test");
        assert!(
            app.delivery(&event, &sibling_id).await.is_none(),
            "the partner's other endpoint must get no delivery of the test event"
        );
        assert_eq!(sibling.count(), 0, "the other endpoint received nothing");

        let (_, stranger) = app.another_partner("Stranger").await;
        expect_problem(
            &app.request("POST", &format!("/v1/endpoints/{id}/test"), &stranger, None)
                .await,
            404,
            "not-found",
        );
        expect_problem(
            &app.request("POST", "/v1/endpoints/ep_nope/test", &key, None)
                .await,
            404,
            "not-found",
        );
        stays_at(&target, 1).await;
        assert_eq!(sibling.count(), 0);
    }
);

// ----- the delivery list -----

on_both_backends!(
    deliveries_are_found_by_endpoint_event_type_state_and_time,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let ok = Receiver::start().await;
        let failing = Receiver::start().await;
        failing.set_default(Reply::status(500));
        let (ok_ep, _) = create_endpoint(&app, &key, json!({"url": ok.url()})).await;
        let (failing_ep, _) = create_endpoint(
            &app,
            &key,
            json!({"url": failing.url(), "event_types": ["usage.*"]}),
        )
        .await;
        let t0 = app.clock.now_ms();
        let usage = app
            .publish(
                "usage.finalized",
                json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
                    "usage_id": "usage_9182", "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013}),
            )
            .await;
        app.wait_for_state(&usage, &ok_ep, "delivered", WAIT).await;
        app.wait_for_state(&usage, &failing_ep, "failed", WAIT)
            .await;
        app.advance(Duration::from_secs(1));
        let balance = app
            .publish(
                "balance.updated",
                json!({"customer_id": "cus_204", "currency": "USD", "balance": "98.725200"}),
            )
            .await;
        app.wait_for_state(&balance, &ok_ep, "delivered", WAIT)
            .await;

        let find = |query: String| {
            let app = &app;
            let key = &key;
            async move {
                let page = expect_status(
                    &app.request("GET", &format!("/v1/deliveries?{query}"), key, None)
                        .await,
                    200,
                );
                let mut found: Vec<(String, String)> = page["data"]
                    .as_array()
                    .expect("data")
                    .iter()
                    .map(|d| {
                        (
                            d["event_id"].as_str().expect("event_id").to_string(),
                            d["endpoint_id"].as_str().expect("endpoint_id").to_string(),
                        )
                    })
                    .collect();
                found.sort();
                found
            }
        };
        let pair = |e: &str, ep: &str| (e.to_string(), ep.to_string());
        let sorted = |mut v: Vec<(String, String)>| {
            v.sort();
            v
        };
        let all = sorted(vec![
            pair(&usage, &ok_ep),
            pair(&usage, &failing_ep),
            pair(&balance, &ok_ep),
        ]);
        let t1 = format_time(t0 + 1000);
        let cases: Vec<(String, Vec<(String, String)>)> = vec![
            (String::new(), all.clone()),
            (
                format!("endpoint_id={failing_ep}"),
                vec![pair(&usage, &failing_ep)],
            ),
            (format!("event_id={balance}"), vec![pair(&balance, &ok_ep)]),
            (
                "event_type=usage.finalized".into(),
                sorted(vec![pair(&usage, &ok_ep), pair(&usage, &failing_ep)]),
            ),
            ("state=failed".into(), vec![pair(&usage, &failing_ep)]),
            ("state=dead".into(), vec![]),
            (
                format!("endpoint_id={ok_ep}&state=delivered"),
                sorted(vec![pair(&usage, &ok_ep), pair(&balance, &ok_ep)]),
            ),
            (format!("since={t1}"), vec![pair(&balance, &ok_ep)]),
            (
                format!("until={t1}"),
                sorted(vec![pair(&usage, &ok_ep), pair(&usage, &failing_ep)]),
            ),
        ];
        for (query, expected) in cases {
            assert_eq!(
                find(query.clone()).await,
                expected,
                "GET /v1/deliveries?{query}"
            );
        }

        let detail = expect_status(
            &app.request(
                "GET",
                &format!(
                    "/v1/deliveries/{}",
                    delivery_id(&app, &key, &usage, &failing_ep).await
                ),
                &key,
                None,
            )
            .await,
            200,
        );
        assert_eq!(detail["state"], "failed");
        assert_eq!(detail["last_status"], 500);
        assert!(
            detail["next_attempt_at"].is_string(),
            "a failed delivery says when it is retried: {detail}"
        );

        let bad = app
            .request("GET", "/v1/deliveries?state=lost", &key, None)
            .await;
        assert_eq!(
            (bad.0, &bad.1["field"]),
            (422, &json!("state")),
            "an unknown state is a 422 naming `state`: {}",
            bad.1
        );
        assert_eq!(content_type(&bad), "application/problem+json");
        let bad = app
            .request("GET", "/v1/deliveries?colour=red", &key, None)
            .await;
        assert_eq!(
            (bad.0, &bad.1["field"]),
            (422, &json!("colour")),
            "an unknown parameter is a 422 naming it: {}",
            bad.1
        );

        let (_, stranger) = app.another_partner("Stranger").await;
        let theirs = expect_status(
            &app.request("GET", "/v1/deliveries", &stranger, None).await,
            200,
        );
        assert_eq!(
            theirs["data"],
            json!([]),
            "another partner sees none of these"
        );
    }
);

/// Walks a list with `limit=7`, counting the pages read in `pages`; between
/// pages waits until `grown` says more rows were written meanwhile. Returns
/// every id seen, in order.
async fn walk<F, Fut>(
    app: &TestApp,
    key: &str,
    list: &str,
    pages: &Cell<usize>,
    grown: F,
) -> Vec<String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = i64>,
{
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let path = match &cursor {
            Some(c) => format!("{list}?limit=7&after={c}"),
            None => format!("{list}?limit=7"),
        };
        let page = expect_status(&app.request("GET", &path, key, None).await, 200);
        let ids = ids_of(&page);
        assert!(ids.len() <= 7, "a page holds at most `limit` rows: {page}");
        seen.extend(ids);
        // Count before announcing the page: the producer writes its row once
        // it sees the page, and a count taken after that write would wait
        // for a second row that never comes.
        let rows = grown().await;
        pages.set(pages.get() + 1);
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return seen,
        }
        let grown = &grown;
        wait_until(WAIT, || async move { (grown().await > rows).then_some(()) })
            .await
            .expect("rows keep being written while the list is walked");
    }
    panic!("the walk of {list} did not end within 1000 pages");
}

fn assert_each_once(seen: &[String], existing: &[String], what: &str) {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for id in seen {
        *counts.entry(id).or_default() += 1;
    }
    let repeated: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        repeated.is_empty(),
        "{what} repeated during the walk: {repeated:?}"
    );
    let missed: Vec<_> = existing
        .iter()
        .filter(|id| !counts.contains_key(id.as_str()))
        .collect();
    assert!(
        missed.is_empty(),
        "{what} that existed before the walk were missed: {missed:?}"
    );
}

on_both_backends!(
    the_delivery_list_pages_without_repeats_or_gaps_while_deliveries_are_created,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &NO_RATE_LIMIT).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
        let event = json!({"type": "a.b", "partner_id": app.partner_id, "data": {}});
        let (status, _) = app.post_events(&Value::Array(vec![event; 30])).await;
        assert_eq!(status, 201);
        wait_until(WAIT, || async {
            (delivery_count(&app).await == 30).then_some(())
        })
        .await
        .expect("30 deliveries");
        let existing = ids_of(&expect_status(
            &app.request("GET", "/v1/deliveries?limit=500", &key, None)
                .await,
            200,
        ));
        assert_eq!(existing.len(), 30);

        let stop = Cell::new(false);
        let published = Cell::new(0usize);
        let producer = async {
            while !stop.get() {
                app.publish("a.b", json!({"more": true})).await;
                published.set(published.get() + 1);
            }
        };
        let walker = async {
            let seen = walk(&app, &key, "/v1/deliveries", &Cell::new(0), || {
                delivery_count(&app)
            })
            .await;
            stop.set(true);
            seen
        };
        let ((), seen) = tokio::join!(producer, walker);
        assert!(published.get() > 0, "events were published during the walk");
        assert_each_once(&seen, &existing, "deliveries");
    }
);

on_both_backends!(
    the_endpoint_list_pages_without_repeats_or_gaps_while_endpoints_are_created,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &NO_RATE_LIMIT).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        for _ in 0..20 {
            create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
        }
        let existing = ids_of(&expect_status(
            &app.request("GET", "/v1/endpoints?limit=500", &key, None)
                .await,
            200,
        ));
        assert_eq!(existing.len(), 20);

        // Appended rows sort after the cursor, so the producer adds one per
        // page read: the walk catches up and ends.
        let stop = Cell::new(false);
        let pages = Cell::new(0usize);
        let producer = async {
            let mut paced = 0;
            while !stop.get() {
                if pages.get() > paced {
                    paced = pages.get();
                    create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
                } else {
                    actix_rt::time::sleep(Duration::from_millis(5)).await;
                }
            }
        };
        let walker = async {
            let seen = walk(&app, &key, "/v1/endpoints", &pages, || endpoint_count(&app)).await;
            stop.set(true);
            seen
        };
        let ((), seen) = tokio::join!(producer, walker);
        assert_each_once(&seen, &existing, "endpoints");
    }
);

// ----- the event feed -----

/// One page of the feed after `cursor`: (event ids, next cursor).
async fn feed_page(app: &TestApp, key: &str, query: &str) -> (Vec<Value>, String) {
    let page = expect_status(
        &app.request("GET", &format!("/v1/events?{query}"), key, None)
            .await,
        200,
    );
    let cursor = page["next_cursor"]
        .as_str()
        .unwrap_or_else(|| panic!("the feed always gives a next_cursor: {page}"))
        .to_string();
    (page["data"].as_array().expect("data").clone(), cursor)
}

on_both_backends!(
    the_event_feed_lists_the_partners_events_in_order_by_cursor,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let (endpoint, _) = create_endpoint(&app, &key, json!({"url": receiver.url()})).await;
        let (stranger_id, stranger) = app.another_partner("Stranger").await;

        // One at a time, each waited for in the feed: feed order is publish order.
        let mut published = Vec::new();
        let mut cursor = String::new();
        for (i, t) in [
            "usage.finalized",
            "balance.updated",
            "usage.finalized",
            "balance.updated",
            "usage.finalized",
        ]
        .iter()
        .enumerate()
        {
            let data = match *t {
                "usage.finalized" => {
                    json!({"i": i, "customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
                        "usage_id": "usage_9182", "model": "gpt-4o-mini", "input_tokens": 41200, "output_tokens": 7013})
                }
                _ => {
                    json!({"i": i, "customer_id": "cus_204", "currency": "USD", "balance": "98.725200"})
                }
            };
            let id = app.publish(t, data).await;
            let after = cursor.clone();
            let (events, next) = wait_until(WAIT, || async {
                let q = if after.is_empty() {
                    String::new()
                } else {
                    format!("after={after}")
                };
                let (events, next) = feed_page(&app, &key, &q).await;
                (!events.is_empty()).then_some((events, next))
            })
            .await
            .unwrap_or_else(|| panic!("event {i} did not reach the feed"));
            assert_eq!(
                events.len(),
                1,
                "only the new event follows the cursor: {events:?}"
            );
            assert_eq!(events[0]["event_id"], id.as_str());
            assert_eq!(events[0]["type"], *t);
            assert_eq!(events[0]["data"]["i"], i);
            cursor = next;
            published.push(id);
        }
        // The stranger's event is not in this partner's feed.
        let (status, _) = app
            .post_events(
                &json!({"type": "usage.finalized", "schema_version": 1, "partner_id": stranger_id,
                "data": {"customer_id": "cus_204", "currency": "USD", "final_cost": "1.20"}}),
            )
            .await;
        assert_eq!(status, 201);

        let mut read = Vec::new();
        let mut after = String::new();
        for _ in 0..10 {
            let q = if after.is_empty() {
                "limit=2".to_string()
            } else {
                format!("limit=2&after={after}")
            };
            let (events, next) = feed_page(&app, &key, &q).await;
            assert!(events.len() <= 2);
            if events.is_empty() {
                assert_eq!(
                    next, after,
                    "an empty page keeps the cursor, so a reader can poll"
                );
                break;
            }
            read.extend(
                events
                    .iter()
                    .map(|e| e["event_id"].as_str().expect("an id").to_string()),
            );
            after = next;
        }
        assert_eq!(
            read, published,
            "following cursors reads every event once, in feed order"
        );

        let (usage, _) = feed_page(&app, &key, "type=usage.finalized").await;
        let usage: Vec<&str> = usage
            .iter()
            .map(|e| e["event_id"].as_str().expect("id"))
            .collect();
        assert_eq!(
            usage,
            vec![
                published[0].as_str(),
                published[2].as_str(),
                published[4].as_str()
            ]
        );

        let stranger_feed = wait_until(WAIT, || async {
            let (events, _) = feed_page(&app, &stranger, "").await;
            (!events.is_empty()).then_some(events)
        })
        .await
        .expect("the stranger's event is in its own feed");
        assert_eq!(stranger_feed.len(), 1);
        assert_eq!(stranger_feed[0]["partner_id"], stranger_id.as_str());

        // One event, with a summary of its deliveries.
        app.wait_for_state(&published[1], &endpoint, "delivered", WAIT)
            .await;
        let one = expect_status(
            &app.request("GET", &format!("/v1/events/{}", published[1]), &key, None)
                .await,
            200,
        );
        assert_eq!(one["event"]["event_id"], published[1].as_str());
        assert_eq!(one["event"]["type"], "balance.updated");
        let deliveries = one["deliveries"].as_array().expect("deliveries");
        assert_eq!(deliveries.len(), 1, "{one}");
        assert_eq!(deliveries[0]["endpoint_id"], endpoint.as_str());
        assert_eq!(deliveries[0]["state"], "delivered");
        expect_problem(
            &app.request(
                "GET",
                &format!("/v1/events/{}", published[1]),
                &stranger,
                None,
            )
            .await,
            404,
            "not-found",
        );
        expect_problem(
            &app.request(
                "GET",
                "/v1/events/evt_01JAAAAAAAAAAAAAAAAAAAAAAA",
                &key,
                None,
            )
            .await,
            404,
            "not-found",
        );
    }
);

on_both_backends!(
    a_reader_following_cursors_sees_every_event_once_while_producers_race,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &NO_RATE_LIMIT).await;
        let key = app.partner_key().await;
        // On PostgreSQL a second hookd on the same database: two fanouts
        // publish concurrently, and producers' commits interleave across both.
        let second = match backend {
            Backend::Postgres => Some(another_instance(&app, &NO_RATE_LIMIT).await),
            Backend::Sqlite => None,
        };
        let bases: Vec<String> = match &second {
            Some(s) => vec![app.base_url.clone(), format!("http://{}", s.addr)],
            None => vec![app.base_url.clone()],
        };
        const PRODUCERS: usize = 4;
        const EACH: usize = 25;
        let mut service_keys = Vec::new();
        for _ in 0..PRODUCERS {
            service_keys.push(app.key(hookd::store::keys::Role::Service, None).await.key);
        }

        let published: RefCell<Vec<String>> = RefCell::new(Vec::new());
        let finished = Cell::new(0usize);
        let produce = |n: usize| {
            let base = bases[n % bases.len()].clone();
            let service_key = service_keys[n].clone();
            let (app, published, finished) = (&app, &published, &finished);
            async move {
                for i in 0..EACH {
                    let body = json!({"type": "a.b", "partner_id": app.partner_id, "data": {"producer": n, "i": i}});
                    let (status, event, _) = call_raw(
                        &app.http,
                        &base,
                        "POST",
                        "/v1/events",
                        &service_key,
                        Some(&body.to_string()),
                    )
                    .await;
                    assert_eq!(status, 201, "producer {n} event {i}: {event}");
                    published
                        .borrow_mut()
                        .push(event["event_id"].as_str().expect("an event id").to_string());
                }
                finished.set(finished.get() + 1);
            }
        };
        let reader = async {
            let mut seen: Vec<String> = Vec::new();
            let mut cursor = String::new();
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            loop {
                let q = if cursor.is_empty() {
                    "limit=10".to_string()
                } else {
                    format!("limit=10&after={cursor}")
                };
                let (events, next) = feed_page(&app, &key, &q).await;
                seen.extend(
                    events
                        .iter()
                        .map(|e| e["event_id"].as_str().expect("an id").to_string()),
                );
                cursor = next;
                if finished.get() == PRODUCERS && seen.len() >= PRODUCERS * EACH {
                    // Everything is read; one more page must be empty.
                    let (events, _) = feed_page(&app, &key, &format!("after={cursor}")).await;
                    seen.extend(
                        events
                            .iter()
                            .map(|e| e["event_id"].as_str().expect("an id").to_string()),
                    );
                    return seen;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the reader saw {} of {} events within 30 s",
                    seen.len(),
                    PRODUCERS * EACH
                );
                if events.is_empty() {
                    actix_rt::time::sleep(Duration::from_millis(10)).await;
                }
            }
        };
        let (seen, (), (), (), ()) =
            tokio::join!(reader, produce(0), produce(1), produce(2), produce(3));
        let published = published.into_inner();
        assert_eq!(published.len(), PRODUCERS * EACH);
        assert_each_once(&seen, &published, "events");
        assert_eq!(
            seen.len(),
            published.len(),
            "the reader saw exactly the published events"
        );
        if let Some(s) = second {
            s.server.stop(false).await;
        }
    }
);

// ----- catalog and limits -----

on_both_backends!(
    the_catalog_and_the_limits_are_published,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let types = expect_status(
            &app.request("GET", "/v1/event-types", &key, None).await,
            200,
        );
        let types = types["data"].as_array().expect("a data array");
        assert!(!types.is_empty(), "the catalog lists event types");
        for t in types {
            assert!(t["type"].is_string(), "each entry has a type: {t}");
            assert!(
                t["description"].as_str().is_some_and(|d| !d.is_empty()),
                "each has a description: {t}"
            );
            assert_eq!(t["schema"]["type"], "object", "each has a JSON Schema: {t}");
        }
        assert!(types.iter().any(|t| t["type"] == "webhook.test"));

        let limits = expect_status(&app.request("GET", "/v1/limits", &key, None).await, 200);
        assert_eq!(limits["retention"]["events_days"], 30, "{limits}");
        assert_eq!(limits["retention"]["deliveries_days"], 30);
        assert_eq!(limits["replay_window_seconds"], 30 * 86_400);
        assert_eq!(limits["page_size"], json!({"default": 50, "max": 500}));
        assert_eq!(
            limits["rate_limit"],
            json!({"requests_per_second": 50, "burst": 100})
        );
        assert_eq!(limits["max_secret_overlap_seconds"], 604_800);

        for path in ["/v1/event-types", "/v1/limits"] {
            expect_problem(
                &app.request("GET", path, "", None).await,
                401,
                "unauthorized",
            );
        }
    }
);

// ----- operators, roles and keys -----

on_both_backends!(
    an_operator_manages_partners_and_keys_and_revocation_is_immediate,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let op = app.operator_key().await;

        let created = app
            .request(
                "POST",
                "/v1/admin/partners",
                &op,
                Some(&json!({"name": "Globex"})),
            )
            .await;
        let globex = expect_status(&created, 201);
        assert_eq!(globex["name"], "Globex");
        assert_eq!(globex["status"], "active");
        let globex_id = globex["id"].as_str().expect("an id").to_string();
        let named = app
            .request(
                "POST",
                "/v1/admin/partners",
                &op,
                Some(&json!({"name": "Initech", "id": "initech"})),
            )
            .await;
        assert_eq!(expect_status(&named, 201)["id"], "initech");
        let twice = app
            .request(
                "POST",
                "/v1/admin/partners",
                &op,
                Some(&json!({"name": "Initech", "id": "initech"})),
            )
            .await;
        expect_problem(&twice, 409, "conflict");
        let bad = app
            .request(
                "POST",
                "/v1/admin/partners",
                &op,
                Some(&json!({"name": ""})),
            )
            .await;
        expect_problem(&bad, 422, "out-of-range");

        let listed = expect_status(
            &app.request("GET", "/v1/admin/partners", &op, None).await,
            200,
        );
        let ids = ids_of(&listed);
        for id in [app.partner_id.as_str(), globex_id.as_str(), "initech"] {
            assert!(ids.iter().any(|i| i == id), "{id} is listed: {listed}");
        }

        let issued = app
            .request(
                "POST",
                &format!("/v1/admin/partners/{globex_id}/keys"),
                &op,
                None,
            )
            .await;
        let issued = expect_status(&issued, 201);
        assert_eq!(issued["role"], "partner");
        assert_eq!(issued["partner_id"], globex_id.as_str());
        let globex_key = issued["key"]
            .as_str()
            .expect("the key, this once")
            .to_string();
        let key_id = issued["id"].as_str().expect("a key id").to_string();
        let receiver = Receiver::start().await;
        let (endpoint, _) =
            create_endpoint(&app, &globex_key, json!({"url": receiver.url()})).await;
        let theirs = expect_status(
            &app.request("GET", "/v1/endpoints", &globex_key, None).await,
            200,
        );
        assert_eq!(
            ids_of(&theirs),
            vec![endpoint.clone()],
            "the new key works on partner routes"
        );
        let acme = app.partner_key().await;
        let ours = expect_status(&app.request("GET", "/v1/endpoints", &acme, None).await, 200);
        assert_eq!(
            ids_of(&ours),
            Vec::<String>::new(),
            "Globex's endpoint is not Acme's"
        );

        expect_problem(
            &app.request("POST", "/v1/admin/partners/ptn_nope/keys", &op, None)
                .await,
            404,
            "not-found",
        );

        let revoked = app
            .request("DELETE", &format!("/v1/admin/keys/{key_id}"), &op, None)
            .await;
        assert_eq!(revoked.0, 204, "revoking answers 204: {}", revoked.1);
        expect_problem(
            &app.request("GET", "/v1/endpoints", &globex_key, None).await,
            401,
            "unauthorized",
        );
        expect_problem(
            &app.request("DELETE", &format!("/v1/admin/keys/{key_id}"), &op, None)
                .await,
            404,
            "not-found",
        );
    }
);

on_both_backends!(
    each_role_is_kept_to_its_own_routes,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let partner = app.partner_key().await;
        let op = app.operator_key().await;
        let partner_on_admin = [
            ("GET", "/v1/admin/partners".to_string()),
            ("POST", "/v1/admin/partners".to_string()),
            (
                "POST",
                format!("/v1/admin/partners/{}/keys", app.partner_id),
            ),
            ("DELETE", "/v1/admin/keys/key_nope".to_string()),
        ];
        for (method, path) in &partner_on_admin {
            let body = (*method == "POST").then(|| json!({"name": "Evil"}));
            let answer = app.request(method, path, &partner, body.as_ref()).await;
            expect_problem(&answer, 403, "forbidden");
        }
        for key in [&op, &app.service_key] {
            for (method, path) in [
                ("GET", "/v1/endpoints"),
                ("GET", "/v1/deliveries"),
                ("GET", "/v1/events"),
                ("GET", "/v1/limits"),
            ] {
                expect_problem(
                    &app.request(method, path, key, None).await,
                    403,
                    "forbidden",
                );
            }
        }
        assert_eq!(
            app.count("SELECT COUNT(*) AS n FROM partner").await,
            1,
            "no partner was created by a partner key"
        );
    }
);

on_both_backends!(
    a_revoked_or_unknown_key_gets_the_same_401,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let op = app.operator_key().await;
        let revoked = app
            .key(hookd::store::keys::Role::Partner, Some(&app.partner_id))
            .await;
        expect_status(
            &app.request("GET", "/v1/endpoints", &revoked.key, None)
                .await,
            200,
        );
        let answer = app
            .request(
                "DELETE",
                &format!("/v1/admin/keys/{}", revoked.id),
                &op,
                None,
            )
            .await;
        assert_eq!(answer.0, 204);

        let unknown = app
            .request(
                "GET",
                "/v1/endpoints",
                "hkp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                None,
            )
            .await;
        let after_revocation = app
            .request("GET", "/v1/endpoints", &revoked.key, None)
            .await;
        let no_key = app.request("GET", "/v1/endpoints", "", None).await;
        let unknown_body = expect_problem(&unknown, 401, "unauthorized");
        let revoked_body = expect_problem(&after_revocation, 401, "unauthorized");
        expect_problem(&no_key, 401, "unauthorized");
        assert_eq!(
            unknown_body, revoked_body,
            "a revoked key's 401 must not differ from an unknown key's"
        );
        assert_eq!(content_type(&unknown), content_type(&after_revocation));
    }
);

on_both_backends!(
    a_key_over_its_rate_limit_gets_429_and_other_keys_do_not,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_API__RATE_LIMIT_PER_SECOND", "2"),
                ("HOOKD_API__RATE_LIMIT_BURST", "2"),
            ],
        )
        .await;
        let key = app.partner_key().await;
        let (_, other) = app.another_partner("Other").await;
        for n in 1..=2 {
            let answer = app.request("GET", "/v1/limits", &key, None).await;
            assert_eq!(
                answer.0, 200,
                "request {n} is within the burst: {}",
                answer.1
            );
        }
        let limited = app.request("GET", "/v1/limits", &key, None).await;
        expect_problem(&limited, 429, "rate-limited");
        let retry_after = limited
            .2
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        assert!(
            retry_after
                .as_deref()
                .and_then(|v| v.parse::<u64>().ok())
                .is_some_and(|s| s >= 1),
            "a 429 must carry Retry-After in whole seconds, got {retry_after:?}"
        );
        let elsewhere = app.request("GET", "/v1/limits", &other, None).await;
        assert_eq!(
            elsewhere.0, 200,
            "another key is not limited by this one: {}",
            elsewhere.1
        );
    }
);
