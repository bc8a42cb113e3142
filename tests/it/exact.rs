//! Exact data: what the producer sent is what the receiver gets, digit for digit; a key given twice and text with control characters are refused.

use std::time::Duration;

use crate::harness::{ApiAnswer, Backend, TestApp, receiver::Receiver, spawn_app};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

/// A 300-digit integer, far past any machine number.
fn three_hundred_digits() -> String {
    (0..300u32)
        .map(|i| char::from(b'1' + (i % 9) as u8))
        .collect()
}

/// `(key, number as written)`: each would lose digits as an `f64` or `u64`.
fn exact_numbers() -> Vec<(&'static str, String)> {
    vec![
        ("past_u64", "18446744073709551616".to_string()),
        ("three_hundred_digits", three_hundred_digits()),
        ("past_f64", "1e+400".to_string()),
        ("tenth", "0.1000000000000000055511151231257827".to_string()),
        ("price", "1.50".to_string()),
    ]
}

/// Numbers whose text is also how Rust prints some `f64`, so a detour
/// through `f64` would respell them (as `1e-7`, `1e+39`, `-1e-30`).
fn plain_spellings() -> Vec<(&'static str, String)> {
    vec![
        ("small", "0.0000001".to_string()),
        ("round", format!("1{}", "0".repeat(39))),
        ("negative", format!("-0.{}1", "0".repeat(29))),
    ]
}

/// Exponents spelt without a sign or with a capital `E`.
fn exponents() -> Vec<(&'static str, String)> {
    vec![
        ("past_f64", "1e400".to_string()),
        ("capital", "1E400".to_string()),
        ("tiny", "2.5E-7".to_string()),
    ]
}

/// Builds an event for the test partner whose `data` holds `numbers` as
/// text: no JSON library on this side gets to round or respell anything.
/// Beside them, the fields `usage.finalized` version 1 requires.
fn event_with(app: &TestApp, numbers: &[(&str, String)]) -> String {
    let data = numbers
        .iter()
        .map(|(key, number)| format!("\"{key}\": {number}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"{{"type": "usage.finalized", "schema_version": 1, "partner_id": "{}", "data": {{"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800", {data}}}}}"#,
        app.partner_id
    )
}

/// Each number appears in `text` as `event_with` wrote it, `"key": number`,
/// ended there (so `1.50` does not pass for `1.500`): byte for byte.
#[track_caller]
fn assert_numbers_kept(text: &str, numbers: &[(&str, String)], place: &str) {
    for (key, number) in numbers {
        let pair = format!("\"{key}\": {number}");
        let kept = text
            .match_indices(&pair)
            .any(|(at, _)| matches!(text.as_bytes().get(at + pair.len()), Some(b',' | b'}')));
        assert!(
            kept,
            "{place}: `{key}` should be {number} digit for digit, but it is not in: {text}"
        );
    }
}

/// The answer is a `status` problem+json of type `…/kind` naming `field`.
#[track_caller]
fn assert_problem(answer: &ApiAnswer, status: u16, kind: &str, field: &str, what: &str) {
    let (got, body, headers) = answer;
    assert_eq!(
        *got, status,
        "{what}: expected {status} `{kind}`, got {body}"
    );
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert_eq!(
        content_type, "application/problem+json",
        "{what}: the refusal should be problem+json: {body}"
    );
    assert_eq!(
        body["type"],
        format!("https://hookd.dev/problems/{kind}"),
        "{what}: wrong problem type: {body}"
    );
    assert_eq!(
        body["field"], field,
        "{what}: the problem should name the field: {body}"
    );
}

/// `GET path` with a partner key, as the raw text hookd sent.
async fn get_text(app: &TestApp, path: &str, key: &str) -> (u16, String) {
    let mut res = app
        .http
        .get(format!("{}{path}", app.base_url))
        .insert_header(("authorization", format!("Bearer {key}")))
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {path} completes: {e}"));
    let body = res.body().await.expect("a response body");
    (
        res.status().as_u16(),
        String::from_utf8_lossy(&body).into_owned(),
    )
}

async fn events(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM outbox_event").await
}

async fn endpoints(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM endpoint").await
}

async fn partners(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM partner").await
}

on_both_backends!(
    numbers_reach_the_receiver_and_the_api_digit_for_digit,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        let (endpoint, _) = app.endpoint(&receiver.url()).await;
        let numbers = exact_numbers();
        let body = event_with(&app, &numbers);
        let (status, answer, _) = app.post_events_with(Some(&app.service_key), &body).await;
        assert_eq!(status, 201, "the event should be accepted: {answer}");
        let event = answer["event_id"]
            .as_str()
            .expect("an event id")
            .to_string();

        let got = receiver.wait_for(1, WAIT).await.expect("the event arrives");
        let delivered = String::from_utf8(got[0].body.clone()).expect("a UTF-8 body");
        assert_numbers_kept(&delivered, &numbers, "the delivered body");
        app.wait_for_state(&event, &endpoint, "delivered", WAIT)
            .await;

        let key = app.partner_key().await;
        let (status, stored) = get_text(&app, &format!("/v1/events/{event}"), &key).await;
        assert_eq!(
            status, 200,
            "the partner should read its event back: {stored}"
        );
        assert_numbers_kept(&stored, &numbers, "GET /v1/events/{id}");
    }
);

on_both_backends!(
    a_number_that_an_f64_prints_alike_reaches_the_receiver_spelt_as_sent,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        app.endpoint(&receiver.url()).await;
        let numbers = plain_spellings();
        let body = event_with(&app, &numbers);
        let (status, answer, _) = app.post_events_with(Some(&app.service_key), &body).await;
        assert_eq!(status, 201, "the event should be accepted: {answer}");
        let got = receiver.wait_for(1, WAIT).await.expect("the event arrives");
        let delivered = String::from_utf8(got[0].body.clone()).expect("a UTF-8 body");
        assert_numbers_kept(&delivered, &numbers, "the delivered body");
    }
);

on_both_backends!(
    an_exponent_reaches_the_receiver_spelt_as_sent,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let receiver = Receiver::start().await;
        app.endpoint(&receiver.url()).await;
        let numbers = exponents();
        let body = event_with(&app, &numbers);
        let (status, answer, _) = app.post_events_with(Some(&app.service_key), &body).await;
        assert_eq!(status, 201, "the event should be accepted: {answer}");
        let got = receiver.wait_for(1, WAIT).await.expect("the event arrives");
        let delivered = String::from_utf8(got[0].body.clone()).expect("a UTF-8 body");
        assert_numbers_kept(&delivered, &numbers, "the delivered body");
    }
);

on_both_backends!(
    an_event_with_a_key_given_twice_is_refused_and_nothing_is_written,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let p = &app.partner_id;
        let cases = [
            (
                format!(r#"{{"type": "a.b", "type": "c.d", "partner_id": "{p}", "data": {{}}}}"#),
                "type",
                "a top-level key twice",
            ),
            (
                format!(
                    r#"{{"type": "a.b", "typ\u0065": "c.d", "partner_id": "{p}", "data": {{}}}}"#
                ),
                "type",
                "one key spelt once plainly and once escaped",
            ),
            (
                format!(
                    r#"{{"type": "a.b", "partner_id": "{p}",
                        "data": {{"items": [{{"a": 1}}, {{"a": 1, "b": 2, "b": 3}}]}}}}"#
                ),
                "data.items[1].b",
                "a key twice deep in data",
            ),
        ];
        for (body, field, what) in cases {
            let (status, problem, content_type) =
                app.post_events_with(Some(&app.service_key), &body).await;
            assert_eq!(status, 400, "{what}: should be refused: {problem}");
            assert_eq!(content_type, "application/problem+json", "{what}");
            assert_eq!(
                problem["type"], "https://hookd.dev/problems/duplicate-key",
                "{what}: {problem}"
            );
            assert_eq!(
                problem["field"], field,
                "{what}: the problem should name the key's path: {problem}"
            );
        }
        assert_eq!(events(&app).await, 0, "no refused event should be written");
    }
);

on_both_backends!(
    a_key_given_twice_in_a_batch_is_named_as_other_batch_problems_name_fields,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let p = &app.partner_id;
        let batch = format!(
            r#"[{{"type": "a.b", "partner_id": "{p}", "data": {{}}}},
                {{"type": "a.b", "partner_id": "{p}", "data": {{"x": 1, "x": 2}}}}]"#
        );
        let (status, problem, _) = app.post_events_with(Some(&app.service_key), &batch).await;
        assert_eq!(status, 400, "the batch should be refused: {problem}");
        assert_eq!(
            problem["type"], "https://hookd.dev/problems/duplicate-key",
            "{problem}"
        );
        // A refused batch names fields `events[i].…` (see ingest.rs); a
        // repeated key should be named the same way.
        assert_eq!(
            problem["field"], "events[1].data.x",
            "the problem should name the key as events[1].data.x: {problem}"
        );
        assert_eq!(
            events(&app).await,
            0,
            "no event of the batch should be written"
        );
    }
);

on_both_backends!(
    event_data_may_hold_any_json_string_even_with_control_characters,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let body = format!(
            r#"{{"type": "a.b", "partner_id": "{}", "data": {{"log": "\u001b[31mred\u0000"}}}}"#,
            app.partner_id
        );
        let (status, answer, _) = app.post_events_with(Some(&app.service_key), &body).await;
        assert_eq!(status, 201, "data is the producer's business: {answer}");
        assert_eq!(answer["data"]["log"], "\u{1b}[31mred\u{0}", "{answer}");
        assert_eq!(events(&app).await, 1);
    }
);

on_both_backends!(
    partner_and_operator_bodies_with_a_key_given_twice_are_refused_and_change_nothing,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let operator = app.operator_key().await;
        let url = "http://127.0.0.1:9/hooks";

        let twice = format!(r#"{{"url": "{url}", "url": "{url}/other"}}"#);
        let answer = app.request_raw("POST", "/v1/endpoints", &key, &twice).await;
        assert_problem(
            &answer,
            400,
            "duplicate-key",
            "url",
            "an endpoint with url twice",
        );
        assert_eq!(endpoints(&app).await, 0, "no endpoint should be created");

        let (id, _) = app.endpoint(url).await;
        let patch = r#"{"description": "first", "description": "second"}"#;
        let path = format!("/v1/endpoints/{id}");
        let answer = app.request_raw("PATCH", &path, &key, patch).await;
        assert_problem(
            &answer,
            400,
            "duplicate-key",
            "description",
            "a patch with description twice",
        );
        let (status, now, _) = app.request("GET", &path, &key, None).await;
        assert_eq!(status, 200, "{now}");
        assert_eq!(
            now["description"], "",
            "the refused patch should change nothing: {now}"
        );

        let partner = r#"{"name": "Globex", "name": "Initech"}"#;
        let answer = app
            .request_raw("POST", "/v1/admin/partners", &operator, partner)
            .await;
        assert_problem(
            &answer,
            400,
            "duplicate-key",
            "name",
            "a partner with name twice",
        );
        assert_eq!(
            partners(&app).await,
            1,
            "only the test's own partner should exist"
        );
    }
);

on_both_backends!(
    a_partner_name_or_endpoint_description_with_a_control_character_is_refused,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let operator = app.operator_key().await;
        for (name, what) in [
            (r#"Acme\u0000"#, "a NUL"),
            (r#"\u001b[31mAcme"#, "an ANSI escape"),
            (r#"Ac\u007fme"#, "a DEL"),
        ] {
            let body = format!(r#"{{"name": "{name}"}}"#);
            let answer = app
                .request_raw("POST", "/v1/admin/partners", &operator, &body)
                .await;
            assert_problem(
                &answer,
                422,
                "validation",
                "name",
                &format!("a partner name with {what}"),
            );
        }
        assert_eq!(partners(&app).await, 1, "no partner should be created");
        let fine = app
            .request_raw(
                "POST",
                "/v1/admin/partners",
                &operator,
                r#"{"name": "Acme GmbH – Zürich"}"#,
            )
            .await;
        assert_eq!(fine.0, 201, "printable Unicode is a fine name: {}", fine.1);

        let key = app.partner_key().await;
        let body = r#"{"url": "http://127.0.0.1:9/hooks", "description": "billing\u0007"}"#;
        let answer = app.request_raw("POST", "/v1/endpoints", &key, body).await;
        assert_problem(
            &answer,
            422,
            "validation",
            "description",
            "a description with a BEL",
        );
        assert_eq!(endpoints(&app).await, 0, "no endpoint should be created");

        let (id, _) = app.endpoint("http://127.0.0.1:9/hooks").await;
        let path = format!("/v1/endpoints/{id}");
        let answer = app
            .request_raw("PATCH", &path, &key, r#"{"description": "\u001b[2J"}"#)
            .await;
        assert_problem(
            &answer,
            422,
            "validation",
            "description",
            "a patched description with an escape",
        );
    }
);
