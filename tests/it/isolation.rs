//! Tenant isolation, walked over the OpenAPI document: every route, called
//! with a second partner's key on the first partner's objects, answers 404
//! (403 for operator routes) and leaks nothing. A new route cannot skip it.

use hookd::{
    domain::clock::Clock as _,
    store::{self, keys::Role},
};
use serde_json::{Value, json};

use crate::harness::{
    TestApp, WAIT, payloads::usage_finalized, read_text, receiver::Receiver,
    send::send_with_optional_body,
};
use hookd_test_macros::both_backends;

/// `method path` (a method as the OpenAPI document spells it) with `key`
/// and an optional JSON body: status and body as text, so that nothing it
/// says, JSON or not, escapes the leak check.
async fn call(
    app: &TestApp,
    method: &str,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (u16, String) {
    let method = awc::http::Method::from_bytes(method.to_uppercase().as_bytes())
        .unwrap_or_else(|_| panic!("the walk does not know the method {method}"));
    let req = app
        .http
        .request(method, format!("{}{path}", app.base_url))
        .insert_header(("authorization", format!("Bearer {key}")));
    let text = body.map(|b| b.to_string());
    let sent = send_with_optional_body(req, "application/json", text.as_deref()).await;
    let (status, text, _) = read_text(sent.expect("the request completes")).await;
    (status, text)
}

#[both_backends]
async fn every_route_hides_one_partners_objects_from_another(app: TestApp) {
    let db = app.db();
    let now = app.clock.now_ms();
    let key_a = store::keys::create(db, Role::Partner, Some(&app.partner_id), now)
        .await
        .expect("key A")
        .key;
    let other = store::partners::create(db, None, "Other", now)
        .await
        .expect("partner B");
    let key_b = store::keys::create(db, Role::Partner, Some(&other.id), now)
        .await
        .expect("key B")
        .key;
    let key_to_revoke = store::keys::create(db, Role::Partner, Some(&app.partner_id), now)
        .await
        .expect("a key of A");

    // Partner A's objects: an endpoint, an event and its delivery.
    let receiver = Receiver::start().await;
    let (status, created) = call(
        &app,
        "post",
        "/v1/endpoints",
        &key_a,
        Some(json!({"url": receiver.url()})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let created: Value = serde_json::from_str(&created).expect("json");
    let endpoint = created["id"].as_str().expect("an id").to_string();
    let event = app
        .publish(
            "usage.finalized",
            usage_finalized("1.00", "usage_1", (1, 1)),
        )
        .await;
    receiver.wait_for(1, WAIT).await.expect("delivered");
    let delivery: String = {
        let (_, body) = call(
            &app,
            "get",
            &format!("/v1/deliveries?event_id={event}"),
            &key_a,
            None,
        )
        .await;
        let v: Value = serde_json::from_str(&body).expect("json");
        v["data"][0]["id"]
            .as_str()
            .expect("A sees its delivery")
            .to_string()
    };
    let incident: String = {
        let operator = app.operator_key().await;
        let body = json!({"partner_id": app.partner_id, "message": "A's own incident"});
        let (status, body) = call(&app, "post", "/v1/admin/incidents", &operator, Some(body)).await;
        assert!(
            (200..300).contains(&status),
            "the operator opens A's incident: {body}"
        );
        let v: Value = serde_json::from_str(&body).expect("json");
        v["id"].as_str().expect("an incident id").to_string()
    };
    let secrets_of_a = [
        &endpoint,
        &event,
        &delivery,
        &app.partner_id,
        &key_to_revoke.id,
        &incident,
    ];

    // Which of A's objects the `{id}` of a route names, by the route's start.
    #[rustfmt::skip]
        let ids_by_route: [(&str, &String); 9] = [
            ("/v1/endpoints",        &endpoint),
            ("/v1/deliveries",       &delivery),
            ("/v1/events",           &event),
            ("/v1/admin/endpoints",  &endpoint),
            ("/v1/admin/deliveries", &delivery),
            ("/v1/admin/events",     &event),
            ("/v1/admin/partners",   &app.partner_id),
            ("/v1/admin/keys",       &key_to_revoke.id),
            ("/v1/admin/incidents",  &incident),
        ];
    let id_named_by = |path: &str| {
        ids_by_route
            .iter()
            .find(|(route, _)| path.starts_with(route))
            .map(|(_, id)| *id)
    };

    let (_, doc) = call(&app, "get", "/v1/openapi.json", &key_b, None).await;
    let doc: Value = serde_json::from_str(&doc).expect("the OpenAPI document");
    let mut walked = 0;
    for (path, operations) in doc["paths"].as_object().expect("paths") {
        for (method, op) in operations.as_object().expect("operations") {
            let schemes: Vec<&str> = op["security"]
                .as_array()
                .map(|s| {
                    s.iter()
                        .filter_map(|r| r.as_object()?.keys().next().map(String::as_str))
                        .collect()
                })
                .unwrap_or_default();
            let scheme = match schemes.as_slice() {
                [] => continue,              // health checks: no data behind them
                ["service_key"] => continue, // ingest: producing, not reading; a partner key is 403 (tests/it/ingest.rs)
                [s] => *s,
                other => panic!(
                    "{method} {path} has several security schemes {other:?}; extend the walk"
                ),
            };
            let id = if !path.contains("{id}") {
                path
            } else {
                id_named_by(path).unwrap_or_else(|| {
                        panic!(
                            "{method} {path}: the walk does not know which object its id names; extend it"
                        )
                    })
            };
            let mut concrete = path.replace("{id}", id.as_str());
            if path == "/v1/events/export" {
                // An export is of a time range: the last hour.
                use hookd::domain::clock::Clock as _;
                let since = hookd::domain::event::format_time(app.clock.now_ms() - 3_600_000);
                concrete = format!("{concrete}?since={since}");
            }
            let body = match (method.as_str(), path.as_str()) {
                ("post", "/v1/endpoints") => Some(json!({"url": receiver.url()})),
                ("post", p) if p.ends_with("/recover") => {
                    Some(json!({"since": hookd::domain::event::format_time(now - 3_600_000)}))
                }
                // B's own partner record: it can only ever change B's.
                ("patch", "/v1/partner") => Some(json!({"notification_email": "b@b.example"})),
                ("patch", _) => Some(json!({"description": "taken over"})),
                ("post", "/v1/admin/partners") => Some(json!({"name": "intruder"})),
                ("post", _) => Some(json!({})),
                _ => None,
            };
            let (status, answer) = call(&app, method, &concrete, &key_b, body).await;
            walked += 1;
            let what = format!(
                "{} {concrete} with another partner's key",
                method.to_uppercase()
            );
            match scheme {
                "operator_key" => assert_eq!(status, 403, "{what}: {answer}"),
                "partner_key" if path.contains("{id}") => {
                    assert_eq!(status, 404, "{what}: {answer}")
                }
                "partner_key" => assert!(
                    (200..300).contains(&status),
                    "{what} on its own collection: {status} {answer}"
                ),
                other => panic!("{what}: unknown security scheme {other}; extend the walk"),
            }
            for secret in secrets_of_a {
                assert!(
                    !answer.contains(secret.as_str()),
                    "{what} leaked {secret}: {answer}"
                );
            }
        }
    }
    assert!(walked >= 20, "the walk covered only {walked} operations");

    // Nothing of A's changed, and A still gets its events.
    let (status, body) = call(
        &app,
        "get",
        &format!("/v1/endpoints/{endpoint}"),
        &key_a,
        None,
    )
    .await;
    assert_eq!(status, 200, "A's endpoint survives the walk: {body}");
    let e: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(e["status"], "active");
    assert_eq!(e["description"], "", "B's PATCH changed nothing");
    let (status, _) = call(&app, "get", "/v1/endpoints", &key_to_revoke.key, None).await;
    assert_eq!(status, 200, "B could not revoke A's key");
    app.publish(
        "usage.finalized",
        usage_finalized("2.00", "usage_2", (1, 1)),
    )
    .await;
    receiver
        .wait_for(2, WAIT)
        .await
        .expect("A's endpoint still receives");
}
