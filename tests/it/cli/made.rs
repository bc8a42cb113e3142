//! What the operator commands make, as the API then sees it: a partner, a
//! key of each role (used against the routes of that role and others), an
//! endpoint that gets the events it subscribes to, signed with the secret
//! printed when it was made.

use hookd::{domain::clock::Clock as _, secret::Secret};
use serde_json::json;

use super::{
    an_event_for, cli_env, cli_json, endpoint_create, key_made, status_of, stored_partner,
};
use crate::harness::{WAIT, answer, receiver::Receiver};
use hookd_test_macros::both_backends;

#[both_backends]
async fn partner_create_stores_the_partner_it_prints(app: TestApp) {
    let env = cli_env(&app);
    let partner = cli_json(&env, &["partner", "create", "--name", "Globex"]).await;
    let id = partner["id"].as_str().expect("an id");
    assert!(id.starts_with("ptn_"), "{partner}");
    let (status, stored) = stored_partner(&app, id).await;
    assert_eq!(
        status, 200,
        "the API knows the partner the CLI made: {stored}"
    );
    assert_eq!(stored["name"], "Globex", "{stored}");
}

#[both_backends]
async fn a_key_made_with_operator_opens_the_operator_api_and_nothing_else(app: TestApp) {
    let env = cli_env(&app);
    let key = key_made(&env, &["--operator"]).await;
    for path in ["/v1/admin/actors", "/v1/admin/partners", "/metrics"] {
        let (status, body) = status_of(&app, "GET", path, &key, None).await;
        assert_eq!(status, 200, "an operator key reads {path}: {body}");
    }
    let event = an_event_for(&app.partner_id);
    let (status, body) = status_of(&app, "POST", "/v1/events", &key, Some(&event)).await;
    assert_eq!(status, 403, "an operator key produces no events: {body}");
    let (status, body) = status_of(&app, "GET", "/v1/endpoints", &key, None).await;
    assert_eq!(status, 403, "an operator key is not a partner's: {body}");
}

#[both_backends]
async fn a_key_made_with_service_ingests_events_and_reads_no_operator_route(app: TestApp) {
    let env = cli_env(&app);
    let key = key_made(&env, &["--service"]).await;
    let event = an_event_for(&app.partner_id);
    let (status, body) = status_of(&app, "POST", "/v1/events", &key, Some(&event)).await;
    assert_eq!(status, 201, "a service key produces events: {body}");
    for path in [
        "/v1/admin/actors",
        "/v1/admin/partners",
        "/metrics",
        "/v1/endpoints",
    ] {
        let (status, body) = status_of(&app, "GET", path, &key, None).await;
        assert_eq!(status, 403, "a service key reads nothing at {path}: {body}");
    }
}

#[both_backends]
async fn a_key_made_for_a_partner_sees_that_partners_endpoints_only(app: TestApp) {
    let env = cli_env(&app);
    let mut endpoints = Vec::new();
    for name in ["Acme", "Globex"] {
        let partner = cli_json(&env, &["partner", "create", "--name", name]).await;
        let partner = partner["id"].as_str().expect("an id").to_string();
        let args = endpoint_create(&partner, "http://127.0.0.1:9/hooks");
        let made = cli_json(&env, &args).await;
        endpoints.push((
            partner,
            made["id"].as_str().expect("an endpoint id").to_string(),
        ));
    }
    let [(acme, own), (_, other)] = [endpoints[0].clone(), endpoints[1].clone()];
    let key = key_made(&env, &["--partner", &acme]).await;

    let (status, listed) = status_of(&app, "GET", "/v1/endpoints", &key, None).await;
    assert_eq!(status, 200, "{listed}");
    let ids = answer::listed(&listed, "id");
    assert_eq!(
        ids,
        [own.as_str()],
        "a partner key lists its partner's endpoints only: {listed}"
    );
    let (status, body) =
        status_of(&app, "GET", &format!("/v1/endpoints/{other}"), &key, None).await;
    assert_eq!(
        status, 404,
        "another partner's endpoint does not exist for it: {body}"
    );
    let (status, body) = status_of(&app, "GET", "/v1/admin/actors", &key, None).await;
    assert_eq!(status, 403, "a partner key reads no operator route: {body}");
    let event = an_event_for(&acme);
    let (status, body) = status_of(&app, "POST", "/v1/events", &key, Some(&event)).await;
    assert_eq!(status, 403, "a partner key produces no events: {body}");
}

#[both_backends]
async fn an_endpoint_made_by_the_cli_gets_the_events_it_subscribes_to_signed_with_the_secret_it_printed(
    app: TestApp,
) {
    let env = cli_env(&app);
    let receiver = Receiver::start().await;
    let url = format!("{}/hooks", receiver.url());
    let args = [
        endpoint_create(&app.partner_id, &url),
        vec!["--event-types", "usage.*,a.b"],
    ]
    .concat();
    let made = cli_json(&env, &args).await;
    let id = made["id"].as_str().expect("an endpoint id");
    let secret = Secret::parse(made["secret"].as_str().expect("the secret is shown once"))
        .expect("a whsec_ secret");
    let partner_key = app.partner_key().await;
    let path = format!("/v1/endpoints/{id}");
    let (status, stored) = status_of(&app, "GET", &path, &partner_key, None).await;
    assert_eq!(status, 200, "{stored}");
    assert_eq!(
        stored["url"],
        format!("{}/hooks", receiver.url()),
        "{stored}"
    );
    assert_eq!(stored["event_types"], json!(["usage.*", "a.b"]), "{stored}");
    assert!(
        stored.get("secret").is_none(),
        "the secret is shown only when made: {stored}"
    );

    let skipped = app.publish("c.d", json!({})).await;
    let event = app.publish("a.b", json!({"n": 1})).await;
    app.wait_for_state(&event, id, "delivered", WAIT).await;
    let got = receiver.received();
    assert_eq!(got.len(), 1, "only the subscribed type arrives");
    assert_eq!(
        app.delivery(&skipped, id).await,
        None,
        "no delivery of an unsubscribed type"
    );
    let r = &got[0];
    hookd::signing::verify(
        &secret,
        &event,
        r.header("webhook-timestamp").unwrap_or_default(),
        r.header("webhook-signature").unwrap_or_default(),
        &r.body,
        app.clock.now_ms() / 1000,
        300,
    )
    .expect("the delivery is signed with the secret the CLI printed");
}
