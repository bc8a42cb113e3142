//! The receiver conformance check against small actix-web receivers that
//! verify with `hookd::signing::verify` and keep an inbox: a correct one
//! passes every case; one that accepts bad signatures fails exactly the
//! signature, timestamp and tamper cases; a slow one passes with a warning
//! or fails the valid case. Through the API the result is stored, listed,
//! limited to once a minute and hidden from other partners; the command line
//! prints the JSON and exits 0, 1 or 2.

use std::{
    collections::HashSet,
    net::SocketAddr,
    process::{Command, Output},
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use actix::Actor as _;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use hookd::{
    config::Config,
    conformance::{
        Scorecard,
        send::{Wire, run},
        suite::{Script, Target},
    },
    delivery::client::{Limits, tls_config},
    domain::{clock::SystemClock, ids::EventId},
    egress::{
        resolver::ResolverActor,
        url_check::{EgressRules, check_url},
    },
    secret::Secret,
    signing::{DEFAULT_TOLERANCE_SECS, verify},
};
use serde_json::Value;

use crate::harness::{self, Backend, spawn_app};
use crate::on_both_backends;

/// How a test receiver behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    /// Verifies, stores the id once, answers 2xx.
    Correct,
    /// Answers 2xx without verifying anything.
    AcceptsBadSignatures,
    /// Correct, but the first request waits this long before it is answered.
    SlowFirst(Duration),
}

/// A receiver's state: the ids it stored and the events its business
/// handler applied (a check event must never reach it).
struct Inbox {
    /// Set once the endpoint (and so its secret) exists.
    secret: Mutex<Secret>,
    behaviour: Behaviour,
    requests: AtomicUsize,
    stored: Mutex<HashSet<String>>,
    applied: Mutex<Vec<String>>,
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> &'a str {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

async fn receive(req: HttpRequest, body: web::Bytes, inbox: web::Data<Inbox>) -> HttpResponse {
    let first = inbox.requests.fetch_add(1, Ordering::SeqCst) == 0;
    if let (Behaviour::SlowFirst(d), true) = (inbox.behaviour, first) {
        actix_rt::time::sleep(d).await;
    }
    let id = header(&req, "webhook-id").to_string();
    if inbox.behaviour != Behaviour::AcceptsBadSignatures {
        let secret = inbox.secret.lock().unwrap().clone();
        let verified = verify(
            &secret,
            &id,
            header(&req, "webhook-timestamp"),
            header(&req, "webhook-signature"),
            &body,
            chrono::Utc::now().timestamp(),
            DEFAULT_TOLERANCE_SECS,
        );
        if let Err(e) = verified {
            return HttpResponse::Unauthorized().body(e.to_string());
        }
    }
    let fresh = inbox.stored.lock().unwrap().insert(id.clone());
    if fresh && header(&req, "webhook-check") != "conformance" {
        inbox.applied.lock().unwrap().push(id);
    }
    HttpResponse::NoContent().finish()
}

/// Starts a receiver at `http://<addr>/hooks`.
fn receiver(secret: &Secret, behaviour: Behaviour) -> (SocketAddr, web::Data<Inbox>) {
    let inbox = web::Data::new(Inbox {
        secret: Mutex::new(secret.clone()),
        behaviour,
        requests: AtomicUsize::new(0),
        stored: Mutex::new(HashSet::new()),
        applied: Mutex::new(Vec::new()),
    });
    let data = inbox.clone();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(web::PayloadConfig::new(1024 * 1024))
            .route("/hooks", web::post().to(receive))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .expect("the receiver binds");
    let addr = server.addrs()[0];
    actix_rt::spawn(server.run());
    (addr, inbox)
}

/// The suite run straight through `conformance::send`, with the egress
/// settings of the test configuration.
async fn check(addr: SocketAddr, secret: &Secret) -> Scorecard {
    let config = Config::load(None, harness::test_env("sqlite::memory:", &[]))
        .expect("the test configuration");
    let rules = EgressRules::from_config(&config.egress);
    let url = check_url(&format!("http://{addr}/hooks"), &rules).expect("an allowed URL");
    let resolver = ResolverActor::new(&config.egress, rules.policy.clone())
        .expect("a resolver")
        .start();
    let tls = tls_config(None).expect("TLS");
    let limits = Limits::from_config(&config.delivery);
    let script = Script::new(
        Target {
            check_id: "chk_test".into(),
            partner_id: "ptn_test".into(),
            endpoint_id: None,
        },
        secret.clone(),
        EventId::generate,
    );
    run(
        &script,
        &url,
        &Wire::new(&resolver, tls, &limits, &SystemClock),
    )
    .await
}

/// (name, passed, hint) of every case.
fn results(card: &Scorecard) -> Vec<(&str, bool, Option<&str>)> {
    card.cases
        .iter()
        .map(|c| (c.name.as_str(), c.passed, c.hint.as_deref()))
        .collect()
}

fn failed_cases(card: &Scorecard) -> Vec<&str> {
    card.cases
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect()
}

#[actix_rt::test]
async fn a_correct_receiver_passes_every_case_and_applies_no_check_event() {
    let secret = Secret::generate();
    let (addr, inbox) = receiver(&secret, Behaviour::Correct);
    let card = check(addr, &secret).await;
    assert!(card.passed, "{}", card.table());
    assert_eq!(card.cases.len(), 8);
    assert!(
        card.cases.iter().all(|c| c.hint.is_none()),
        "a quick correct receiver gets no hint: {}",
        card.table()
    );
    assert_eq!(
        inbox.requests.load(Ordering::SeqCst),
        8,
        "one request per case"
    );
    assert_eq!(
        inbox.stored.lock().unwrap().len(),
        3,
        "stored: the valid event (once, its duplicate acknowledged), the unknown type and the large body"
    );
    assert!(
        inbox.applied.lock().unwrap().is_empty(),
        "marked: no business handler ran"
    );
}

#[actix_rt::test]
async fn a_receiver_that_accepts_bad_signatures_fails_exactly_those_cases_with_hints() {
    let secret = Secret::generate();
    let (addr, _inbox) = receiver(&secret, Behaviour::AcceptsBadSignatures);
    let card = check(addr, &secret).await;
    assert!(!card.passed);
    assert_eq!(
        failed_cases(&card),
        [
            "wrong_signature",
            "missing_signature",
            "stale_timestamp",
            "tampered_body"
        ],
        "{}",
        card.table()
    );
    for (name, passed, hint) in results(&card) {
        if !passed {
            let hint = hint.unwrap_or_else(|| panic!("{name} failed without a hint"));
            assert!(hint.contains("accepted"), "{name}: {hint}");
        }
    }
    let wrong = &card.cases[2];
    assert_eq!(wrong.expected, "4xx: the signature does not match");
    assert!(wrong.got.starts_with("204 in "), "{}", wrong.got);
}

#[actix_rt::test]
async fn a_receiver_answering_in_3_s_passes_with_a_warning() {
    let secret = Secret::generate();
    let (addr, _inbox) = receiver(&secret, Behaviour::SlowFirst(Duration::from_secs(3)));
    let card = check(addr, &secret).await;
    assert!(card.passed, "slow is still a pass: {}", card.table());
    let valid = &card.cases[0];
    assert_eq!(valid.name, "valid_event");
    assert!(
        valid.hint.as_deref().is_some_and(|h| h.starts_with("slow")),
        "a warning: {valid:?}"
    );
}

#[actix_rt::test]
async fn a_receiver_answering_after_5_s_fails_the_valid_case() {
    let secret = Secret::generate();
    let (addr, _inbox) = receiver(&secret, Behaviour::SlowFirst(Duration::from_secs(6)));
    let started = std::time::Instant::now();
    let card = check(addr, &secret).await;
    assert_eq!(failed_cases(&card), ["valid_event"], "{}", card.table());
    assert_eq!(card.cases[0].got, "timeout: no answer within 5 s");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "the check gave up at the deadline"
    );
}

/// A receiver at `/hooks` for an endpoint of the test partner, verifying
/// with the endpoint's secret: (endpoint id, its inbox).
async fn endpoint_with_receiver(
    app: &harness::TestApp,
    behaviour: Behaviour,
) -> (String, web::Data<Inbox>) {
    let (addr, inbox) = receiver(&Secret::generate(), behaviour);
    let (id, secret) = app.endpoint(&format!("http://{addr}/hooks")).await;
    *inbox.secret.lock().unwrap() = secret;
    (id, inbox)
}

on_both_backends!(
    the_api_checks_an_endpoint_stores_the_result_and_lists_it,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let (id, inbox) = endpoint_with_receiver(&app, Behaviour::Correct).await;

        let (status, body, _) = app
            .request("POST", &format!("/v1/endpoints/{id}/check"), &key, None)
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["passed"], true, "{body}");
        assert_eq!(body["endpoint_id"], id.as_str());
        let cases = body["cases"].as_array().expect("cases");
        assert_eq!(cases.len(), 8);
        for c in cases {
            let mut keys: Vec<&String> = c.as_object().expect("a case").keys().collect();
            keys.sort();
            assert_eq!(keys, ["expected", "got", "hint", "name", "passed"], "{c}");
        }
        let check_id = body["id"].as_str().expect("an id").to_string();
        assert!(check_id.starts_with("chk_"), "{check_id}");
        assert!(
            body["checked_at"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
        assert_eq!(inbox.requests.load(Ordering::SeqCst), 8);
        assert!(
            inbox.applied.lock().unwrap().is_empty(),
            "no business handler ran"
        );

        let (status, list, _) = app
            .request("GET", &format!("/v1/endpoints/{id}/checks"), &key, None)
            .await;
        assert_eq!(status, 200, "{list}");
        assert_eq!(list["data"][0]["id"], check_id.as_str(), "{list}");
        assert_eq!(
            list["data"][0]["cases"], body["cases"],
            "the stored scorecard"
        );
        assert_eq!(list["data"][0]["passed"], true);
        assert_eq!(list["next_cursor"], Value::Null);

        // A minute later a second check may run; the list is newest first,
        // a page at a time.
        app.advance(Duration::from_secs(61));
        let (status, second, _) = app
            .request("POST", &format!("/v1/endpoints/{id}/check"), &key, None)
            .await;
        assert_eq!(status, 200, "{second}");
        let path = format!("/v1/endpoints/{id}/checks?limit=1");
        let (_, page, _) = app.request("GET", &path, &key, None).await;
        assert_eq!(page["data"][0]["id"], second["id"], "newest first: {page}");
        let cursor = page["next_cursor"].as_str().expect("a next page");
        let (_, page, _) = app
            .request("GET", &format!("{path}&after={cursor}"), &key, None)
            .await;
        assert_eq!(page["data"][0]["id"], check_id.as_str(), "{page}");
    }
);

on_both_backends!(
    a_second_check_within_a_minute_is_refused_and_another_partner_sees_nothing,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let (id, inbox) = endpoint_with_receiver(&app, Behaviour::Correct).await;
        let check = format!("/v1/endpoints/{id}/check");
        let (status, body, _) = app.request("POST", &check, &key, None).await;
        assert_eq!(status, 200, "{body}");

        app.advance(Duration::from_secs(30));
        let (status, refused, headers) = app.request("POST", &check, &key, None).await;
        assert_eq!(status, 429, "{refused}");
        let retry: u64 = headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok()?.parse().ok())
            .expect("a Retry-After");
        assert!(
            (29..=31).contains(&retry),
            "retry in about 30 s, got {retry}"
        );
        assert_eq!(
            inbox.requests.load(Ordering::SeqCst),
            8,
            "nothing was sent again"
        );

        // The limit is in the database: another instance refuses too
        // (SQLite takes one instance).
        if backend == Backend::Postgres {
            let other = harness::another_instance(&app, &[]).await;
            let (status, _, _) = harness::call_raw(
                &app.http,
                &format!("http://{}", other.addr),
                "POST",
                &check,
                &key,
                None,
            )
            .await;
            assert_eq!(status, 429, "the second instance keeps the limit");
        }

        let (_, stranger) = app.another_partner("Other").await;
        app.advance(Duration::from_secs(60));
        for (method, path) in [("POST", check.clone()), ("GET", format!("{check}s"))] {
            let (status, body, _) = app.request(method, &path, &stranger, None).await;
            assert_eq!(status, 404, "{method} {path} of another partner: {body}");
            assert!(!body.to_string().contains("chk_"), "{body}");
        }
        assert_eq!(
            inbox.requests.load(Ordering::SeqCst),
            8,
            "the stranger sent nothing"
        );
        let (status, _, _) = app
            .request("GET", "/v1/endpoints/ep_nope/checks", &key, None)
            .await;
        assert_eq!(status, 404);
    }
);

/// `hookd check-receiver <args>` as a child process, with the test
/// configuration (loopback allowed over http) and `extra` on top.
async fn check_receiver(extra: &[(&str, &str)], args: Vec<String>) -> Output {
    let mut env = harness::test_env("sqlite::memory:", &[("HOOKD_LOG__FILTER", "warn")]);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    actix_rt::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_hookd"))
            .arg("check-receiver")
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .output()
            .expect("the hookd binary runs")
    })
    .await
    .expect("the child finished")
}

fn args(addr: SocketAddr, secret: &Secret) -> Vec<String> {
    vec![
        "--url".into(),
        format!("http://{addr}/hooks"),
        "--secret".into(),
        secret.expose(),
        "--json".into(),
    ]
}

#[actix_rt::test]
async fn the_command_line_prints_the_json_scorecard_and_exits_0_for_a_good_receiver_and_1_for_a_bad_one()
 {
    let secret = Secret::generate();
    let (good, _) = receiver(&secret, Behaviour::Correct);
    let out = check_receiver(&[], args(good, &secret)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let card: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let mut keys: Vec<&String> = card.as_object().expect("an object").keys().collect();
    keys.sort();
    assert_eq!(keys, ["cases", "checked_at", "passed"], "{card}");
    assert_eq!(card["passed"], true);

    let (bad, _) = receiver(&secret, Behaviour::AcceptsBadSignatures);
    let out = check_receiver(&[], args(bad, &secret)).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let card: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(card["passed"], false);
    assert_eq!(card["cases"][2]["name"], "wrong_signature");
    assert_eq!(card["cases"][2]["passed"], false);

    // Without --json: a table with a line per case.
    let mut plain = args(good, &secret);
    plain.pop();
    let out = check_receiver(&[], plain).await;
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}");
    assert!(table.contains("ok    valid_event"), "{table}");
    assert!(table.contains("8 of 8 cases passed"), "{table}");
}

#[actix_rt::test]
async fn the_command_line_refuses_a_loopback_receiver_without_the_egress_settings_with_exit_2() {
    let secret = Secret::generate();
    let (addr, inbox) = receiver(&secret, Behaviour::Correct);
    let out = check_receiver(&[("HOOKD_EGRESS__ALLOW_CIDRS", "[]")], args(addr, &secret)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("egress.allow_cidrs"),
        "the refusal names the setting: {stderr}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(inbox.requests.load(Ordering::SeqCst), 0, "nothing was sent");

    let out = check_receiver(
        &[],
        vec![
            "--url".into(),
            format!("http://{addr}/hooks"),
            "--secret".into(),
            "nope".into(),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "a bad secret is a usage error");
}
