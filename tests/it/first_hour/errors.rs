//! One error grammar: an unknown field is `unknown-field` with the field
//! named, in a body (ingest included) and in a query; every query-parameter
//! error names its parameter in `field`; 400 is for what hookd cannot read
//! and 422 for what it read and refuses, the same in a body and a query; a
//! batch lists every refused event (up to 20 errors, each with its JSON
//! pointer) and counts the rest.

use serde_json::{Value, json};

use crate::harness::{ApiAnswer, Backend, TestApp, quiesce, spawn_app, spawn_app_with};

/// `None` when `answer` is the problem (status, type slug, field) wanted;
/// otherwise what differs.
fn mismatch(answer: &ApiAnswer, status: u16, kind: &str, field: Option<&str>) -> Option<String> {
    let (got, body, headers) = answer;
    let mut wrong = Vec::new();
    if *got != status {
        wrong.push(format!("status {got}, not {status}"));
    }
    let t = body["type"].as_str().unwrap_or_default();
    if t != format!("https://hookd.dev/problems/{kind}") {
        wrong.push(format!("type `{t}`, not …/{kind}"));
    }
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if content_type != "application/problem+json" {
        wrong.push(format!("content-type `{content_type}`"));
    }
    if body["field"].as_str() != field {
        wrong.push(format!("field {}, not {field:?}", body["field"]));
    }
    (!wrong.is_empty()).then(|| format!("{}: {body}", wrong.join(", ")))
}

/// A problem's `detail`, as text (empty when it has none).
fn detail(problem: &Value) -> &str {
    problem["detail"].as_str().unwrap_or_default()
}

/// The key a route's tag needs.
async fn key_for(app: &TestApp, tags: &Value) -> String {
    match tags[0].as_str() {
        Some("admin") => app.operator_key().await,
        Some("ingest") => app.service_key.clone(),
        _ => app.partner_key().await,
    }
}

/// Every query parameter of every route the OpenAPI document lists, given
/// an unknown parameter, a value of the wrong type, a forged cursor, a time
/// that is not RFC 3339 or a parameter twice: 422 (400 for the repeat), and
/// `field` names the parameter.
#[hookd_test_macros::test]
async fn every_query_parameter_error_names_its_parameter_with_one_status_per_kind() {
    let app = spawn_app(Backend::Sqlite).await;
    let (endpoint, _) = app.endpoint("http://127.0.0.1:9/hooks").await;
    let event = app.publish("a.b", json!({})).await;
    let (_, doc, _) = app.request("GET", "/v1/openapi.json", "", None).await;

    let mut wrong = Vec::new();
    let mut tried = 0;
    for (template, item) in doc["paths"].as_object().expect("paths") {
        let Some(op) = item.get("get") else { continue };
        let params: Vec<(&str, &str)> = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query")
            .map(|p| {
                let name = p["name"].as_str().unwrap_or_default();
                (name, p["schema"]["type"].as_str().unwrap_or_default())
            })
            .collect();
        if params.is_empty() {
            continue;
        }
        let id = if template.starts_with("/v1/events/") {
            &event
        } else {
            &endpoint
        };
        let path = template.replace("{id}", id);
        let route_key = key_for(&app, &op["tags"]).await;
        let mut cases: Vec<(String, u16, &str, &str)> = vec![(
            "hookd_no_such=1".into(),
            422,
            "unknown-field",
            "hookd_no_such",
        )];
        for &(name, kind) in &params {
            match (name, kind) {
                ("after", _) => cases.push(("after=garbage".into(), 422, "invalid-cursor", name)),
                ("since" | "until", _) => {
                    cases.push((format!("{name}=yesterday"), 422, "invalid-type", name));
                }
                (_, "integer") => cases.push((format!("{name}=ten"), 422, "invalid-type", name)),
                (_, "boolean") => cases.push((format!("{name}=maybe"), 422, "invalid-type", name)),
                _ => {}
            }
            // A value of the right type, twice: the repeat alone is wrong.
            let fine = match kind {
                "integer" => "1",
                "boolean" => "true",
                _ => "dns",
            };
            let twice = format!("{name}={fine}&{name}={fine}");
            cases.push((twice, 400, "duplicate-key", name));
        }
        for (query, status, kind, field) in cases {
            tried += 1;
            let target = format!("{path}?{query}");
            let answer = app.request("GET", &target, &route_key, None).await;
            if let Some(w) = mismatch(&answer, status, kind, Some(field)) {
                wrong.push(format!("GET {target}: {w}"));
            }
        }
    }
    assert!(
        tried > 40,
        "the document lists the query parameters ({tried} cases)"
    );
    assert!(
        wrong.is_empty(),
        "these query errors break the grammar:\n{}",
        wrong.join("\n")
    );
    quiesce().await;
}

/// A value hookd does not list is out of range, and the answer lists them.
#[hookd_test_macros::test]
async fn a_query_value_hookd_does_not_list_is_out_of_range_and_the_answer_lists_them() {
    let app = spawn_app(Backend::Sqlite).await;
    let key = app.partner_key().await;
    let operator = app.operator_key().await;
    for (target, key, field) in [
        ("/v1/deliveries?state=bogus", &key, "state"),
        ("/v1/admin/deliveries?state=bogus", &operator, "state"),
        ("/v1/admin/deliveries?category=bogus", &operator, "category"),
        ("/v1/admin/endpoints?status=bogus", &operator, "status"),
        ("/v1/admin/events?state=bogus", &operator, "state"),
    ] {
        let answer = app.request("GET", target, key, None).await;
        if let Some(w) = mismatch(&answer, 422, "out-of-range", Some(field)) {
            panic!("GET {target}: {w}");
        }
    }
    let answer = app
        .request("GET", "/v1/deliveries?state=bogus", &key, None)
        .await;
    assert!(
        detail(&answer.1).contains("delivered"),
        "the detail lists the states: {}",
        answer.1
    );
    quiesce().await;
}

#[hookd_test_macros::test]
async fn the_rejected_event_list_refuses_since_as_a_validation_problem() {
    let app = spawn_app(Backend::Sqlite).await;
    let operator = app.operator_key().await;
    let since = "/v1/admin/events?state=rejected&since=2026-01-01T00:00:00Z";
    let answer = app.request("GET", since, &operator, None).await;
    if let Some(w) = mismatch(&answer, 422, "validation", Some("since")) {
        panic!("GET {since}: {w}");
    }
    quiesce().await;
}

/// `METHOD path`, body (empty: none), status, problem type, field.
type Case<'a> = (&'a str, String, u16, &'a str, Option<&'a str>);

/// What hookd cannot read is 400; what it read and refuses is 422, in a
/// body as in a query.
#[hookd_test_macros::test]
async fn the_same_mistake_gets_the_same_answer_in_a_body_and_in_a_query() {
    let app = spawn_app(Backend::Sqlite).await;
    let key = app.partner_key().await;
    let url = "http://127.0.0.1:9/hooks";
    let cases: [Case; 7] = [
        (
            "POST /v1/endpoints",
            r#"{"url": "#.into(),
            400,
            "malformed-json",
            None,
        ),
        (
            "POST /v1/endpoints",
            format!(r#"{{"url": "{url}", "url": "{url}"}}"#),
            400,
            "duplicate-key",
            Some("url"),
        ),
        (
            "GET /v1/endpoints?limit=1&limit=2",
            String::new(),
            400,
            "duplicate-key",
            Some("limit"),
        ),
        (
            "POST /v1/endpoints",
            json!({"url": url, "colour": "red"}).to_string(),
            422,
            "unknown-field",
            Some("colour"),
        ),
        (
            "GET /v1/endpoints?colour=red",
            String::new(),
            422,
            "unknown-field",
            Some("colour"),
        ),
        (
            "POST /v1/endpoints",
            json!({"url": url, "concurrency": "ten"}).to_string(),
            422,
            "invalid-type",
            Some("concurrency"),
        ),
        (
            "GET /v1/endpoints?limit=ten",
            String::new(),
            422,
            "invalid-type",
            Some("limit"),
        ),
    ];
    for (request, body, status, kind, field) in cases {
        let (method, path) = request.split_once(' ').expect("METHOD path");
        let answer = if body.is_empty() {
            app.request(method, path, &key, None).await
        } else {
            app.request_raw(method, path, &key, &body).await
        };
        if let Some(w) = mismatch(&answer, status, kind, field) {
            panic!("{request} {body}: {w}");
        }
    }
    quiesce().await;
}

fn event(i: usize, partner: &str) -> Value {
    json!({
        "type": "balance.threshold_crossed", "partner_id": partner, "event_id": format!("evt_00000000-0000-0000-0000-{i:012}"),
        "data": {"customer_id": "cus_204", "currency": "USD", "balance": "9.274800",
                 "threshold": "10.000000", "direction": "below"},
    })
}

/// An unknown field in one event at ingest is `unknown-field` naming it.
#[hookd_test_macros::test]
async fn an_unknown_field_in_one_event_at_ingest_is_named() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut one = event(0, &app.partner_id);
    one["colour"] = json!("red");
    let answer = app
        .request_raw("POST", "/v1/events", &app.service_key, &one.to_string())
        .await;
    if let Some(w) = mismatch(&answer, 422, "unknown-field", Some("colour")) {
        panic!("one event: {w}");
    }
    quiesce().await;
}

/// An unknown field deep in a batch's event is named by its path and its
/// JSON pointer, without a position inside the event's text.
#[hookd_test_macros::test]
async fn an_unknown_field_in_a_batch_is_named_by_its_path_and_pointer() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut nested = event(1, &app.partner_id);
    nested["subject"] = json!({"type": "customer", "id": "cus_204", "colour": 1});
    let batch = json!([event(2, &app.partner_id), nested]);
    let (status, problem) = app.post_events(&batch).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(
        problem["type"], "https://hookd.dev/problems/unknown-field",
        "{problem}"
    );
    assert_eq!(problem["field"], "events[1].subject.colour", "{problem}");
    assert_eq!(
        problem["errors"][0]["pointer"], "/events/1/subject/colour",
        "{problem}"
    );
    assert!(
        !detail(&problem).contains(" at line "),
        "no position inside one event's text, which would mislead: {problem}"
    );
    quiesce().await;
}

/// A batch of 30 with 25 refused events of four kinds: every refused
/// event up to 20 errors, each with its pointer, in request order, the
/// rest counted; nothing is stored.
#[hookd_test_macros::test]
async fn a_batch_lists_every_refused_event_up_to_twenty_and_counts_the_rest() {
    let app = spawn_app_with(Backend::Sqlite, &[("HOOKD_CATALOG__STRICT", "true")]).await;
    let partner = app.partner_id.clone();
    let mut wanted: Vec<(String, &str)> = Vec::new();
    let batch: Vec<Value> = (0..30)
        .map(|i| {
            let mut e = event(i, &partner);
            if (1..=25).contains(&i) {
                let (pointer, kind) = match i % 4 {
                    0 => {
                        e["colour"] = json!("red");
                        ("colour", "unknown-field")
                    }
                    1 => {
                        e["data"]["balance"] = json!(9.27);
                        ("data/balance", "invalid-data")
                    }
                    2 => {
                        e["type"] = json!("balance.threshold_crosed");
                        ("type", "unknown-event-type")
                    }
                    _ => {
                        e.as_object_mut().expect("an object").remove("type");
                        ("type", "validation")
                    }
                };
                wanted.push((format!("/events/{i}/{pointer}"), kind));
            }
            e
        })
        .collect();
    let (status, problem) = app.post_events(&Value::Array(batch)).await;
    assert_eq!(status, 422, "{problem}");
    let errors = problem["errors"].as_array().expect("errors");
    let listed: Vec<(String, &str)> = errors
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().unwrap_or_default();
            (
                e["pointer"].as_str().unwrap_or_default().to_string(),
                kind.rsplit('/').next().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        wanted[..20],
        "the first 20 refused events, in order"
    );
    assert!(
        errors
            .iter()
            .all(|e| e["message"].as_str().is_some_and(|m| !m.is_empty())),
        "each error says what is wrong: {problem}"
    );
    assert_eq!(
        problem["more_errors"], 5,
        "the other 5 are counted: {problem}"
    );
    assert_eq!(
        problem["field"], "events[1].data",
        "the first names `field`: {problem}"
    );
    assert!(
        detail(&problem).starts_with("25 of the 30 events"),
        "{problem}"
    );
    assert_eq!(
        app.count("SELECT COUNT(*) AS n FROM outbox_event").await,
        0,
        "nothing of a refused batch is stored"
    );
    quiesce().await;
}

/// Events of partners that do not exist: each one is named.
#[hookd_test_macros::test]
async fn a_batch_names_each_event_of_a_partner_that_does_not_exist() {
    let app = spawn_app(Backend::Sqlite).await;
    let partner = app.partner_id.clone();
    let batch = json!([
        event(40, "ptn_nobody"),
        event(41, &partner),
        event(42, "ptn_gone")
    ]);
    let (status, problem) = app.post_events(&batch).await;
    assert_eq!(status, 422, "{problem}");
    let pointers: Vec<&str> = problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["pointer"].as_str())
        .collect();
    assert_eq!(
        pointers,
        ["/events/0/partner_id", "/events/2/partner_id"],
        "{problem}"
    );
    quiesce().await;
}
