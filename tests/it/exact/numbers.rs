//! Numbers reach the receiver and the API as the producer wrote them: past
//! any machine number, with trailing zeros, in the spelling an `f64` would
//! change, with exponents of any case.

use crate::harness::{Backend, TestApp, WAIT, read_text, receiver::Receiver, spawn_app};
use hookd_test_macros::both_backends;

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
/// Its type is one the catalog does not name: the bundled schemas are closed,
/// so a catalogued type takes no field its schema does not declare.
fn event_with(app: &TestApp, numbers: &[(&str, String)]) -> String {
    let data = numbers
        .iter()
        .map(|(key, number)| format!("\"{key}\": {number}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"{{"type": "numbers.spelt", "partner_id": "{}", "data": {{"customer_id": "cus_204", {data}}}}}"#,
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

/// Publishes an event holding `numbers` to an endpoint of a new receiver
/// and waits until it is delivered: the app, the event's id and the body
/// the receiver got, as text.
async fn delivered(backend: Backend, numbers: &[(&str, String)]) -> (TestApp, String, String) {
    let app = spawn_app(backend).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    let body = event_with(&app, numbers);
    let (status, answer, _) = app.post_events_with(Some(&app.service_key), &body).await;
    assert_eq!(status, 201, "the event should be accepted: {answer}");
    let event = answer["event_id"]
        .as_str()
        .expect("an event id")
        .to_string();
    let got = receiver.wait_for(1, WAIT).await.expect("the event arrives");
    let text = String::from_utf8(got[0].body.clone()).expect("a UTF-8 body");
    app.wait_for_state(&event, &endpoint, "delivered", WAIT)
        .await;
    (app, event, text)
}

/// Delivers an event holding `numbers` (see `delivered`) and checks the
/// receiver got each as written.
async fn assert_delivered_as_written(backend: Backend, numbers: &[(&str, String)]) {
    let (_app, _event, text) = delivered(backend, numbers).await;
    assert_numbers_kept(&text, numbers, "the delivered body");
}

#[both_backends]
async fn numbers_reach_the_receiver_digit_for_digit(backend: Backend) {
    assert_delivered_as_written(backend, &exact_numbers()).await;
}

#[both_backends]
async fn numbers_read_back_from_the_api_are_as_sent_digit_for_digit(backend: Backend) {
    let numbers = exact_numbers();
    let (app, event, _) = delivered(backend, &numbers).await;
    let key = app.partner_key().await;
    let path = format!("/v1/events/{event}");
    let sent = app
        .http
        .get(format!("{}{path}", app.base_url))
        .bearer_auth(&key)
        .send()
        .await;
    let (status, stored, _) =
        read_text(sent.unwrap_or_else(|e| panic!("GET {path} completes: {e}"))).await;
    assert_eq!(
        status, 200,
        "the partner should read its event back: {stored}"
    );
    assert_numbers_kept(&stored, &numbers, "GET /v1/events/{id}");
}

#[both_backends]
async fn a_number_that_an_f64_prints_alike_reaches_the_receiver_spelt_as_sent(backend: Backend) {
    assert_delivered_as_written(backend, &plain_spellings()).await;
}

#[both_backends]
async fn an_exponent_reaches_the_receiver_spelt_as_sent(backend: Backend) {
    assert_delivered_as_written(backend, &exponents()).await;
}
