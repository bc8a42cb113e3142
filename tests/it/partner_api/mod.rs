//! The Partner API end to end, a file per resource: endpoints and their
//! secrets, replays and recovery, test events, the delivery search, paging
//! while rows are written, the event feed (by cursor and by time) and its
//! NDJSON export, the catalog, the operator's
//! partners and keys, and every kind of bad input in tables of the problem
//! each gets. This file holds what they share: the few calls every test
//! makes, and the one runner of problem tables.

/// A test on both backends (as `on_both_backends!`) that is one problem
/// table and nothing else, sent as the test's `Callers`:
/// `problem_table! { name, [rows] }` checks each row's problem
/// (`expect_problems`); `problem_table! { name, writing no "what" in
/// "table", [rows] }` also checks that no row wrote a row of `table`
/// (`expect_problems_writing_nothing`).
macro_rules! problem_table {
    ($name:ident, [$($row:expr),* $(,)?]) => {
        $crate::on_both_backends!($name, |app: TestApp| async move {
            let callers = $crate::partner_api::Callers::of(&app).await;
            let cases: Vec<$crate::partner_api::Case> = vec![$($row),*];
            $crate::partner_api::expect_problems(&app, &callers, &cases).await;
        });
    };
    ($name:ident, writing no $what:literal in $table:literal, [$($row:expr),* $(,)?]) => {
        $crate::on_both_backends!($name, |app: TestApp| async move {
            let callers = $crate::partner_api::Callers::of(&app).await;
            let cases: Vec<$crate::partner_api::Case> = vec![$($row),*];
            $crate::partner_api::expect_problems_writing_nothing(&app, &callers, &cases, $table, $what)
                .await;
        });
    };
}

mod bad_input;
mod catalog;
mod deliveries;
mod endpoints;
pub(crate) mod export;
mod feed;
mod feed_race;
pub(crate) mod feed_time;
mod operator;
mod paging;
mod recover;
mod replays;
mod roles;
mod secrets;
mod test_events;

use std::collections::HashMap;

use hookd::{
    domain::clock::Clock as _,
    secret::Secret,
    store::keys::{self, Role},
};
use serde_json::Value;

use crate::harness::{
    ApiAnswer, TestApp, WAIT, answer, receiver::Receiver, rows::rows, sets::assert_none_missing,
    wait_until,
};

use crate::harness::expect_status;

/// `GET path` with `key`, which must answer 200; returns the body.
async fn get_ok(app: &TestApp, key: &str, path: &str) -> Value {
    expect_status(&app.request("GET", path, key, None).await, 200)
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

/// A receiver and an endpoint of the test partner pointing at it, over the API.
async fn endpoint_at_receiver(app: &TestApp, key: &str) -> (Receiver, String, Secret) {
    let receiver = Receiver::start().await;
    let (id, secret) = create_endpoint(app, key, serde_json::json!({"url": receiver.url()})).await;
    (receiver, id, secret)
}

/// The number of endpoints, of every partner.
async fn endpoint_count(app: &TestApp) -> i64 {
    rows(app, "endpoint").await
}

/// The number of deliveries, of every partner.
async fn delivery_count(app: &TestApp) -> i64 {
    rows(app, "delivery").await
}

/// The id of the one delivery of `event` (to `endpoint`), found over the API.
async fn delivery_id(app: &TestApp, key: &str, event: &str, endpoint: &str) -> String {
    let path = format!("/v1/deliveries?event_id={event}&endpoint_id={endpoint}");
    let page = get_ok(app, key, &path).await;
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

fn ids_of(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a page has a data array: {page}"))
        .iter()
        .map(|d| d["id"].as_str().expect("an id").to_string())
        .collect()
}

/// Every id in `seen` appears once, and every id in `existing` appears.
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
    assert_none_missing(
        existing.iter().map(String::as_str),
        |id| counts.contains_key(id),
        &format!("{what} that existed before the walk were missed"),
    );
}

// ----- problem tables -----

/// `method ours` (an object of the test partner) with another partner's
/// key, and `method unknown` (an id that names nothing) with the partner's
/// own: both must be a 404 `not-found` problem, so that a stranger cannot
/// tell another partner's object from none at all.
async fn expect_hidden_from_strangers(
    app: &TestApp,
    callers: &Callers,
    method: &str,
    ours: &str,
    unknown: &str,
) {
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        (method, ours,    Caller::Stranger, Body::Empty, 404, "not-found", None),
        (method, unknown, Caller::Partner,  Body::Empty, 404, "not-found", None),
    ];
    expect_problems(app, callers, &cases).await;
}

/// Who sends a row of a problem table.
#[derive(Debug, Clone, Copy)]
enum Caller {
    /// A key of the test partner.
    Partner,
    /// A key of another partner.
    Stranger,
    Operator,
    Service,
    /// No `Authorization` header at all.
    Anonymous,
    /// A well-formed partner key hookd never issued.
    Unknown,
    /// A partner key of the test partner, revoked.
    Revoked,
}

/// The keys behind each `Caller` of a test.
struct Callers {
    partner: String,
    stranger: String,
    stranger_id: String,
    operator: String,
    service: String,
    revoked: String,
}

impl Callers {
    /// A key of each kind; this adds a partner ("Stranger") to the test's.
    async fn of(app: &TestApp) -> Callers {
        let (stranger_id, stranger) = app.another_partner("Stranger").await;
        let revoked = app.key(Role::Partner, Some(&app.partner_id)).await;
        let gone = keys::revoke(app.db(), &revoked.id, app.clock.now_ms()).await;
        assert!(
            gone.expect("the revocation is written"),
            "the key is revoked"
        );
        Callers {
            partner: app.partner_key().await,
            stranger,
            stranger_id,
            operator: app.operator_key().await,
            service: app.service_key.clone(),
            revoked: revoked.key,
        }
    }

    fn key(&self, caller: Caller) -> &str {
        match caller {
            Caller::Partner => &self.partner,
            Caller::Stranger => &self.stranger,
            Caller::Operator => &self.operator,
            Caller::Service => &self.service,
            Caller::Anonymous => "",
            Caller::Unknown => "hkp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            Caller::Revoked => &self.revoked,
        }
    }
}

/// The body of a row of a problem table.
#[derive(Debug)]
enum Body {
    Empty,
    Json(Value),
    /// Sent exactly as written (say, broken JSON).
    Raw(String),
}

/// A row of a problem table: (method, path, caller, body, status, problem
/// type, field). A `None` field says the problem names no field.
type Case<'a> = (
    &'a str,
    &'a str,
    Caller,
    Body,
    u16,
    &'a str,
    Option<&'a str>,
);

/// Sends every row and checks each answer is its problem: the status, the
/// type `…/kind`, `application/problem+json`, the status repeated in the
/// body, and the field (or none). Fails once, naming every row that got
/// something else and what came back; returns the answers in row order.
async fn expect_problems(app: &TestApp, callers: &Callers, cases: &[Case<'_>]) -> Vec<ApiAnswer> {
    let mut answers = Vec::new();
    let mut wrong = Vec::new();
    for (row, (method, path, caller, body, status, kind, field)) in cases.iter().enumerate() {
        let key = callers.key(*caller);
        let answer = match body {
            Body::Empty => app.request(method, path, key, None).await,
            Body::Json(v) => app.request(method, path, key, Some(v)).await,
            Body::Raw(text) => app.request_raw(method, path, key, text).await,
        };
        if let Some(what) = problem_mismatch(&answer, *status, kind, *field) {
            wrong.push(format!(
                "row {row}: {method} {path} as {caller:?} with {body:?}: {what}"
            ));
        }
        answers.push(answer);
    }
    assert!(
        wrong.is_empty(),
        "{} of {} rows got the wrong answer:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    answers
}

/// Like `expect_problems`, and checks that none of the rows wrote a row of
/// `table` (what `what` names).
async fn expect_problems_writing_nothing(
    app: &TestApp,
    callers: &Callers,
    cases: &[Case<'_>],
    table: &str,
    what: &str,
) -> Vec<ApiAnswer> {
    let before = rows(app, table).await;
    let answers = expect_problems(app, callers, cases).await;
    assert_eq!(rows(app, table).await, before, "no {what} was written");
    answers
}

/// What is wrong with an answer that should be a `status` problem of type
/// `…/kind` naming `field`; `None` when it is right.
fn problem_mismatch(
    answer: &ApiAnswer,
    status: u16,
    kind: &str,
    field: Option<&str>,
) -> Option<String> {
    let (got, body, headers) = answer;
    let t = body["type"].as_str().unwrap_or_default();
    let content_type = answer::header(headers, "content-type").unwrap_or_default();
    let mut wrong = Vec::new();
    if *got != status {
        wrong.push(format!("status {got}, not {status}"));
    }
    if !t.ends_with(&format!("/{kind}")) {
        wrong.push(format!("type `{t}`, not …/{kind}"));
    }
    if content_type != "application/problem+json" {
        wrong.push(format!("content-type `{content_type}`"));
    }
    if body["status"] != *got {
        wrong.push(format!(
            "the body's status {} is not the answer's",
            body["status"]
        ));
    }
    let named = body["field"].as_str();
    if named != field {
        wrong.push(format!("field {named:?}, not {field:?}"));
    }
    (!wrong.is_empty()).then(|| format!("{}; got {body}", wrong.join(", ")))
}
