//! One client address, strangers and producers together (a sidecar shares
//! 127.0.0.1 with every process on its host): once the strangers have spent
//! the address's budget for failures, a valid key still gets through every
//! time, also one made after start; a revoked or unknown key still does not,
//! and an unknown one is refused without a database look-up.

use std::time::Duration;

use serde_json::json;

use crate::harness::{ApiAnswer, Backend, Limited, TestApp, rate_limit, spawn_app_with};
use crate::rate_limits::{PARTNER_ROUTE, assert_limited, until_429};
use hookd::domain::clock::Clock as _;
use hookd::store::keys::Role;
use hookd_test_macros::both_backends;

/// A token shaped like a partner key that no one holds: each use reaches
/// the key look-up (a shorter one is refused before it) and fails.
const STRANGER: &str = "hkp_notakeyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

/// hookd whose address budget for failures is 1 a second, 2 at once.
async fn tight_budget(backend: Backend) -> TestApp {
    spawn_app_with(backend, &rate_limit(Limited::Anonymous, "1", "2")).await
}

/// A stranger's request: `GET PARTNER_ROUTE` with a key no one holds.
async fn stranger(app: &TestApp) -> ApiAnswer {
    app.request("GET", PARTNER_ROUTE, STRANGER, None).await
}

/// Strangers spend the address's whole budget: 401s, then a 429.
async fn strangers_spend_the_budget(app: &TestApp) {
    let (n, refusal) = until_429(401, || stranger(app)).await;
    assert_eq!(n, 2, "the strangers' burst of 2 failures");
    assert_limited(&refusal, "1");
}

/// `GET PARTNER_ROUTE` with `key`: its status and body.
async fn partner_call(app: &TestApp, key: &str) -> ApiAnswer {
    app.request("GET", PARTNER_ROUTE, key, None).await
}

#[both_backends]
async fn valid_keys_get_through_every_time_while_strangers_keep_their_address_over_budget(
    backend: Backend,
) {
    let app = tight_budget(backend).await;
    let partner = app.partner_key().await;
    let event = json!({"type": "usage.finalized", "schema_version": 1, "partner_id": app.partner_id,
        "data": {"customer_id": "cus_204", "currency": "USD", "final_cost": "1.20"}});
    strangers_spend_the_budget(&app).await;
    let mut refused = 0;
    for round in 1..=30 {
        // Strangers at 10 a second against a refill of 1: the address stays
        // over budget, whatever each of them is answered.
        app.advance(Duration::from_millis(100));
        let (status, body, _) = stranger(&app).await;
        assert!(matches!(status, 401 | 429), "a stranger: {status} {body}");
        refused += usize::from(status == 429);
        let (status, body, _) = partner_call(&app, &partner).await;
        assert_eq!(status, 200, "round {round}: the partner key: {body}");
        let (status, body, _) = app
            .request("POST", "/v1/events", &app.service_key, Some(&event))
            .await;
        assert_eq!(status, 201, "round {round}: the service key: {body}");
    }
    assert!(
        refused >= 25,
        "the strangers were mostly refused for the address's budget ({refused} of 30)"
    );
}

#[both_backends]
async fn a_key_made_through_the_api_after_start_gets_through_an_address_over_budget(
    backend: Backend,
) {
    let app = tight_budget(backend).await;
    let operator = app.operator_key().await;
    strangers_spend_the_budget(&app).await;
    let path = format!("/v1/admin/partners/{}/keys", app.partner_id);
    let (status, made, _) = app.request("POST", &path, &operator, None).await;
    assert_eq!(status, 201, "the operator key makes a key: {made}");
    let key = made["key"].as_str().expect("the new key");
    for n in 1..=3 {
        let (status, body, _) = partner_call(&app, key).await;
        assert_eq!(status, 200, "use {n} of the new key: {body}");
    }
    assert_limited(&stranger(&app).await, "1");
}

#[both_backends]
async fn a_key_revoked_through_the_api_gets_429_from_an_address_over_budget(backend: Backend) {
    let app = tight_budget(backend).await;
    let operator = app.operator_key().await;
    let revoked = app.key(Role::Partner, Some(&app.partner_id)).await;
    strangers_spend_the_budget(&app).await;
    let path = format!("/v1/admin/keys/{}", revoked.id);
    let (status, body, _) = app.request("DELETE", &path, &operator, None).await;
    assert_eq!(status, 204, "the operator revokes the key: {body}");
    assert_limited(&partner_call(&app, &revoked.key).await, "1");
}

#[both_backends]
async fn a_key_revoked_elsewhere_gets_no_success_from_an_address_over_budget(backend: Backend) {
    let app = tight_budget(backend).await;
    let revoked = app.key(Role::Partner, Some(&app.partner_id)).await;
    strangers_spend_the_budget(&app).await;
    // As another instance or `hookd key revoke` would: this process may
    // list the key until its next refresh, so the request may reach the
    // database, which refuses it.
    let now = app.clock.now_ms();
    let done = hookd::store::keys::revoke(app.db(), &revoked.id, now).await;
    assert_eq!(done.ok(), Some(true), "the key is revoked in the store");
    assert_limited(&partner_call(&app, &revoked.key).await, "1");
    app.advance(Duration::from_secs(1));
    let (status, body, _) = partner_call(&app, &revoked.key).await;
    assert_eq!(
        status, 401,
        "with a token back, the revoked key is refused: {body}"
    );
    assert_limited(&stranger(&app).await, "1");
}

#[both_backends]
async fn an_unknown_key_from_an_address_over_budget_gets_429_without_a_key_look_up(
    backend: Backend,
) {
    let app = tight_budget(backend).await;
    let partner = app.partner_key().await;
    strangers_spend_the_budget(&app).await;
    // Without its table, any key look-up fails loudly (500).
    use sea_orm::ConnectionTrait as _;
    app.db()
        .execute_unprepared("ALTER TABLE api_key RENAME TO api_key_away")
        .await
        .expect("the key table is renamed");
    assert_limited(&stranger(&app).await, "1");
    let (status, body, _) = partner_call(&app, &partner).await;
    assert_eq!(
        status, 500,
        "a known key is looked up (and the look-up fails without its table): {body}"
    );
}
