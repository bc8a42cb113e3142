//! Recovering an endpoint: every failed or dead delivery of that endpoint
//! created in the window is replayed, and nothing else; a window too old,
//! backwards or not a time is refused.

use std::{collections::HashSet, time::Duration};

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::json;

use super::{
    Body::*, Caller::*, Callers, Case, create_endpoint, delivery_id, delivery_with_attempts,
    endpoint_at_receiver, expect_problems, expect_status,
};
use crate::harness::{
    WAIT,
    receiver::{Receiver, Reply},
    schedule::exact_schedule,
    spawn_app_with,
};
use hookd_test_macros::both_backends;

#[both_backends]
async fn recover_replays_every_failed_or_dead_delivery_of_the_endpoint_in_the_window(
    backend: Backend,
) {
    let app = spawn_app_with(backend, &exact_schedule(r#"["0s", "1h"]"#)).await;
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
    assert_eq!(
        receiver
            .wait_for(4, WAIT)
            .await
            .expect("four attempts so far")
            .len(),
        4
    );

    let path = format!("/v1/endpoints/{id}/recover");
    let recent = json!({"since": format_time(app.clock.now_ms() - 500)});
    let empty = expect_status(&app.request("POST", &path, &key, Some(&recent)).await, 202);
    assert_eq!(
        empty["replayed"], 0,
        "nothing failed in the last half second: {empty}"
    );

    receiver.set_default(Reply::status(200));
    let all = json!({"since": format_time(start - 60_000)});
    let answer = expect_status(&app.request("POST", &path, &key, Some(&all)).await, 202);
    assert_eq!(
        answer["replayed"], 2,
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
    receiver.stays_at(6).await;
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
}

#[both_backends]
async fn a_recover_window_too_old_backwards_or_not_a_time_is_refused(backend: Backend) {
    let app = spawn_app_with(backend, &[("HOOKD_DELIVERY__SCHEDULE", r#"["0s"]"#)]).await;
    let callers = Callers::of(&app).await;
    let (receiver, endpoint, _) = endpoint_at_receiver(&app, &callers.partner).await;
    receiver.set_default(Reply::status(500));
    let event = app.publish("a.b", json!({})).await;
    app.wait_for_state(&event, &endpoint, "dead", WAIT).await;

    let now = app.clock.now_ms();
    let at = |ago_ms: i64| format_time(now - ago_ms);
    let path = format!("/v1/endpoints/{endpoint}/recover");
    let p = path.as_str();
    #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("POST", p, Partner, Json(json!({"since": at(31 * 86_400_000)})),                  422, "out-of-range",  Some("since")),
            ("POST", p, Partner, Json(json!({"since": at(60_000), "until": at(60_000)})),      422, "out-of-range",  Some("until")),
            ("POST", p, Partner, Json(json!({"since": at(60_000), "until": at(120_000)})),     422, "out-of-range",  Some("until")),
            ("POST", p, Partner, Json(json!({"since": "yesterday"})),                          422, "invalid-type",  Some("since")),
            ("POST", p, Partner, Json(json!({"since": at(60_000), "colour": 1})),              422, "unknown-field", Some("colour")),
            ("POST", p, Stranger, Json(json!({"since": at(60_000)})),                          404, "not-found",     None),
        ];
    expect_problems(&app, &callers, &cases).await;
    receiver.stays_at(1).await;
}
