//! Payloads that cannot leak secrets: the secret screen refuses a key in
//! `data` with 422 naming the pointer and the rule (single event, batch and
//! `hookd event publish`), stores and delivers nothing, lets an allowed field
//! through, and the value never reaches the answer or hookd's log; the
//! bundled schemas are closed, so an undeclared field is refused by pointer.

use std::time::Duration;

use serde_json::{Value, json};

use super::STRICT;
use crate::harness::{
    self, Backend, SLOW, TestApp,
    process::{Hookd, log_tail, prepare_store, run_off_runtime},
    receiver::Receiver,
    serve::serve_env,
    spawn_app_with,
};
use hookd_test_macros::both_backends;

/// A live key's shape, assembled so no whole key sits in the source.
fn live_key() -> String {
    format!("sk_live_{}", "4eC39HqLyjWDarjtT1zdp7dc")
}

fn balance(partner: &str, data: Value) -> Value {
    json!({"type": "balance.updated", "partner_id": partner, "schema_version": 1, "data": data})
}

async fn stored(app: &TestApp) -> i64 {
    app.count("SELECT COUNT(*) AS n FROM outbox_event").await
}

/// An app with a subscribed receiver; the screen's config as `extra`.
async fn app_with_receiver(backend: Backend, extra: &[(&str, &str)]) -> (TestApp, Receiver) {
    let app = spawn_app_with(backend, extra).await;
    let receiver = Receiver::start().await;
    app.endpoint(&receiver.url()).await;
    (app, receiver)
}

#[both_backends]
async fn a_key_in_data_is_refused_by_pointer_and_rule_and_nothing_is_stored_or_sent(
    backend: Backend,
) {
    let (app, receiver) = app_with_receiver(backend, &[]).await;
    let event = json!({"type": "made.up", "partner_id": app.partner_id,
                       "data": {"customer_id": "cus_204", "api_key": live_key()}});
    let (status, body) = app.post_events(&event).await;
    let text = body.to_string();
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["type"], "https://hookd.dev/problems/secret-in-data");
    assert_eq!(body["errors"][0]["pointer"], "/data/api_key", "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("payment-provider-key")),
        "the rule is named: {body}"
    );
    assert!(
        !text.contains(&live_key()),
        "the answer repeats the key: {text}"
    );
    // A producer's rendition for older endpoints is screened the same way.
    let rendition = json!({"type": "made.up", "partner_id": app.partner_id, "data": {"n": 1},
                           "renditions": {"1": {"api_key": live_key()}}});
    let (status, body) = app.post_events(&rendition).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["errors"][0]["pointer"], "/renditions/1/api_key",
        "{body}"
    );
    assert_eq!(stored(&app).await, 0, "nothing is stored");
    receiver.stays_at(0).await;
}

#[both_backends]
async fn a_batch_with_one_secret_deep_in_data_stores_none_of_its_events(backend: Backend) {
    let (app, receiver) = app_with_receiver(backend, &[]).await;
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let batch = json!([
        {"type": "made.up", "partner_id": app.partner_id, "data": {"n": 1}},
        {"type": "made.up", "partner_id": app.partner_id,
         "data": {"repos": [{"name": "a"}, {"name": "b", "auth": {"note": token}}]}}
    ]);
    let (status, body) = app.post_events(&batch).await;
    let text = body.to_string();
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["errors"][0]["pointer"], "/events/1/data/repos/1/auth/note",
        "{body}"
    );
    assert!(
        !text.contains(&token),
        "the answer repeats the token: {text}"
    );
    assert_eq!(stored(&app).await, 0, "a batch is all or nothing");
    receiver.stays_at(0).await;
}

#[both_backends]
async fn a_field_the_operator_allowed_passes_the_screen(backend: Backend) {
    let allow = ("HOOKD_PAYLOAD__ALLOW", r#"["made.up:/data/fixture_key"]"#);
    let (app, receiver) = app_with_receiver(backend, &[allow]).await;
    let allowed = json!({"type": "made.up", "partner_id": app.partner_id,
                         "data": {"fixture_key": live_key()}});
    let (status, body) = app.post_events(&allowed).await;
    assert_eq!(status, 201, "{body}");
    receiver
        .wait_for(1, SLOW)
        .await
        .expect("the allowed event is delivered");
    let elsewhere = json!({"type": "made.up", "partner_id": app.partner_id,
                           "data": {"other_key": live_key()}});
    let (status, body) = app.post_events(&elsewhere).await;
    assert_eq!(status, 422, "only the allowed field passes: {body}");
}

#[both_backends]
async fn a_closed_schema_refuses_an_undeclared_field_by_its_pointer(backend: Backend) {
    let app = spawn_app_with(backend, &[STRICT]).await;
    let data = json!({"customer_id": "cus_204", "currency": "USD", "balance": "1.00",
                      "note": "not in the schema"});
    let (status, body) = app.post_events(&balance(&app.partner_id, data)).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["type"], "https://hookd.dev/problems/invalid-data");
    assert_eq!(body["errors"][0]["pointer"], "/data/note", "{body}");
    assert_eq!(stored(&app).await, 0);
    // A secret under an undeclared name is the screen's: its answer never
    // quotes values, which a schema's message might.
    let data = json!({"customer_id": "cus_204", "currency": "USD", "balance": "1.00",
                      "api_key": live_key()});
    let (status, body) = app.post_events(&balance(&app.partner_id, data)).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["type"], "https://hookd.dev/problems/secret-in-data");
}

#[both_backends]
async fn hookd_event_publish_refuses_a_secret_and_never_prints_it(backend: Backend) {
    let app = spawn_app_with(backend, &[]).await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("event.json");
    let event = json!({"type": "made.up", "partner_id": app.partner_id,
                       "data": {"customer": {"password": "x9Qm2LpT7vR4nZ8kW3jH"}}});
    std::fs::write(&file, event.to_string()).expect("the event file is written");
    let url = &app.running.shared.config.database.url;
    let env = harness::test_env(url, &[("HOOKD_LOG__FILTER", "debug")]);
    let args = ["event", "publish", file.to_str().expect("utf-8")].map(String::from);
    let out = run_off_runtime(env, args.to_vec()).await;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "refused: {printed}");
    assert!(
        printed.contains("/data/customer/password") && printed.contains("high-entropy-secret"),
        "the pointer and the rule are named: {printed}"
    );
    assert!(
        !printed.contains("x9Qm2LpT7vR4nZ8kW3jH"),
        "the value is printed: {printed}"
    );
    assert_eq!(stored(&app).await, 0);
}

#[both_backends]
async fn a_refused_secret_never_reaches_the_log_of_a_running_hookd(backend: Backend) {
    let (url, _db) = harness::database(backend).await;
    let receiver = Receiver::start().await;
    let (partner, service_key) = prepare_store(&url, &receiver.url(), 1).await;
    let work = tempfile::tempdir().expect("a temporary directory");
    let (listen, env) = serve_env(&url, &[("HOOKD_LOG__FILTER", "trace")]);
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "secret");
    let http = awc::Client::default();
    let base = format!("http://{listen}");
    hookd.wait_healthy(&http, &base, SLOW).await;
    let event = json!({"type": "made.up", "partner_id": partner,
                       "data": {"api_key": live_key()}});
    let mut res = http
        .post(format!("{base}/v1/events"))
        .insert_header(("authorization", format!("Bearer {service_key}")))
        .insert_header(("content-type", "application/json"))
        .send_body(event.to_string())
        .await
        .expect("hookd answers");
    let answer = res.body().await.expect("a body");
    assert_eq!(res.status().as_u16(), 422);
    assert!(!String::from_utf8_lossy(&answer).contains(&live_key()));
    // Give the log writer a moment before stopping hookd.
    actix_rt::time::sleep(Duration::from_millis(300)).await;
    hookd.kill();
    let log = hookd.stderr();
    assert!(!log.is_empty(), "hookd logged at trace level");
    assert!(
        !log.contains(&live_key()),
        "the key reached the log: {}",
        log_tail(&log)
    );
    receiver.stays_at(0).await;
}
