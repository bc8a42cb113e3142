//! Keys and partners answered from memory: a key found valid, and a partner
//! found to exist, are held for `access::HELD_FOR`. A revocation through
//! this instance is honoured from the next request on; one through another
//! instance (PostgreSQL) as soon as its notification arrives; one nobody
//! announces (plain SQL) when the entry expires, or when an instance whose
//! listening connection was cut is back on it. Unknown keys and partners
//! are never held. The tests' clock stands still unless a test moves it, so
//! no entry expires by itself here.

use hookd::{
    domain::clock::Clock as _,
    http::access::HELD_FOR,
    store::{self, keys::Role},
};
use hookd_test_macros::both_backends;
use sea_orm::ConnectionTrait as _;
use serde_json::json;

use crate::harness::{
    Backend, TestApp, WAIT, another_instance, call_raw, quiesce, skip_postgres, spawn_app,
    wait_until,
};

/// Publishes one event for `partner` with `key`: the answer's status.
async fn publish_with(app: &TestApp, key: &str, partner: &str) -> u16 {
    let body = json!({"type": "a.b", "partner_id": partner, "data": {}}).to_string();
    app.post_events_with(Some(key), &body).await.0
}

/// Publishes one event for the test's partner with `key` and checks the
/// answer's status; `why` says what it means.
async fn expect_key(app: &TestApp, key: &str, status: u16, why: &str) {
    assert_eq!(
        publish_with(app, key, &app.partner_id).await,
        status,
        "{why}"
    );
}

/// Publishes one event for `partner` with the test's service key and checks
/// the answer's status; `why` says what it means.
async fn expect_partner(app: &TestApp, partner: &str, status: u16, why: &str) {
    assert_eq!(
        publish_with(app, &app.service_key, partner).await,
        status,
        "{why}"
    );
}

/// Publishes with `key` for `partner` until the answer is `status`; panics
/// with `why` if it is not within `WAIT`.
async fn publish_answers_within_wait(
    app: &TestApp,
    key: &str,
    partner: &str,
    status: u16,
    why: &str,
) {
    let answered = wait_until(WAIT, || async {
        (publish_with(app, key, partner).await == status).then_some(())
    })
    .await;
    assert!(answered.is_some(), "{why} (within {WAIT:?})");
}

async fn sql(app: &TestApp, statement: &str) {
    app.db()
        .execute_unprepared(statement)
        .await
        .unwrap_or_else(|e| panic!("`{statement}` runs: {e}"));
}

/// A service key of its own, made straight in the store.
async fn service_key(app: &TestApp) -> store::keys::NewKey {
    app.key(Role::Service, None).await
}

/// A key this instance holds (it published with it), then revoked by plain
/// SQL, which announces nothing: it is still answered from memory.
async fn a_key_held_then_revoked_by_plain_sql(app: &TestApp) -> store::keys::NewKey {
    let key = service_key(app).await;
    expect_key(app, &key.key, 201, "the key works").await;
    let revoke = format!("UPDATE api_key SET revoked_at = 1 WHERE id = '{}'", key.id);
    sql(app, &revoke).await;
    expect_key(
        app,
        &key.key,
        201,
        "unannounced, the entry fresh: still held",
    )
    .await;
    key
}

/// A partner this instance holds (an event was published for it), then
/// removed by plain SQL, as nothing in hookd removes one: its id.
async fn a_partner_held_then_removed(app: &TestApp) -> String {
    let doomed = store::partners::create(app.db(), None, "Doomed", app.clock.now_ms())
        .await
        .expect("a partner");
    expect_partner(app, &doomed.id, 201, "the partner exists").await;
    sql(
        app,
        &format!("DELETE FROM partner WHERE id = '{}'", doomed.id),
    )
    .await;
    doomed.id
}

/// Revokes `key_id` through the operator API of the hookd at `base_url`.
async fn revoke_through_the_api(app: &TestApp, base_url: &str, key_id: &str) {
    let operator = app.operator_key().await;
    let path = format!("/v1/admin/keys/{key_id}");
    let (status, body, _) = call_raw(&app.http, base_url, "DELETE", &path, &operator, None).await;
    assert_eq!(status, 204, "the operator revokes the key: {body}");
}

#[both_backends]
async fn a_key_and_a_partner_found_lately_are_answered_without_their_tables(app: TestApp) {
    let key = service_key(&app).await;
    expect_key(&app, &key.key, 201, "the key works").await;
    // Without its table, a look-up fails loudly (500).
    sql(&app, "ALTER TABLE api_key RENAME TO api_key_away").await;
    sql(&app, "ALTER TABLE partner RENAME TO partner_away").await;
    let status = publish_with(&app, &key.key, &app.partner_id).await;
    sql(&app, "ALTER TABLE api_key_away RENAME TO api_key").await;
    sql(&app, "ALTER TABLE partner_away RENAME TO partner").await;
    assert_eq!(
        status, 201,
        "the key and the partner found by the first request answer the second from memory"
    );
}

#[both_backends]
async fn a_key_revoked_through_the_api_is_refused_on_the_very_next_request(app: TestApp) {
    let key = service_key(&app).await;
    expect_key(&app, &key.key, 201, "the key works").await;
    revoke_through_the_api(&app, &app.base_url, &key.id).await;
    expect_key(
        &app,
        &key.key,
        401,
        "revoked here: never answered from memory",
    )
    .await;
}

#[both_backends]
async fn a_key_revoked_by_plain_sql_is_refused_once_its_entry_expires(app: TestApp) {
    let key = a_key_held_then_revoked_by_plain_sql(&app).await;
    app.advance(HELD_FOR);
    expect_key(
        &app,
        &key.key,
        401,
        &format!("looked up again after {HELD_FOR:?}: refused"),
    )
    .await;
}

#[both_backends]
async fn a_key_refused_as_unknown_works_the_moment_it_is_made(app: TestApp) {
    // A key another instance is about to make: its row is written by hand,
    // with the hash of a key chosen here.
    let key = "hks_AAAAAAAAmadeelsewhereamomentagoAAAAAAAAAA";
    expect_key(&app, key, 401, "not made yet").await;
    let insert = format!(
        "INSERT INTO api_key (id, partner_id, prefix, hash, role, created_at) \
         VALUES ('key_elsewhere', NULL, '{}', '{}', 'service', 0)",
        &key[..12],
        store::keys::hash(key)
    );
    sql(&app, &insert).await;
    expect_key(&app, key, 201, "an unknown key is not held as unknown").await;
}

#[both_backends]
async fn a_removed_partners_events_are_refused_once_its_entry_expires(app: TestApp) {
    let doomed = a_partner_held_then_removed(&app).await;
    expect_partner(
        &app,
        &doomed,
        201,
        "unannounced, the entry fresh: still held",
    )
    .await;
    app.advance(HELD_FOR);
    let body = json!({"type": "a.b", "partner_id": &doomed, "data": {}}).to_string();
    let (status, problem, _) = app.post_events_with(Some(&app.service_key), &body).await;
    assert_eq!(status, 422, "refused once the entry expired: {problem}");
    assert!(
        problem.to_string().contains("does not exist"),
        "the refusal names the partner: {problem}"
    );
}

#[both_backends]
async fn a_partner_refused_as_unknown_is_found_the_moment_it_is_made(app: TestApp) {
    let later = "ptn_made_a_moment_later";
    expect_partner(&app, later, 422, "not made yet").await;
    store::partners::create(app.db(), Some(later.into()), "Later", app.clock.now_ms())
        .await
        .expect("a partner");
    expect_partner(
        &app,
        later,
        201,
        "an unknown partner is not held as unknown",
    )
    .await;
}

/// Two instances on one PostgreSQL database, sharing the tests' standing
/// clock: nothing expires, so only the notification can make the second
/// refuse what the first revoked.
#[hookd_test_macros::test]
async fn on_postgresql_a_key_revoked_through_another_instance_is_refused_when_the_notice_arrives() {
    if skip_postgres() {
        return;
    }
    let app = spawn_app(Backend::Postgres).await;
    let other = another_instance(&app, &[]).await;
    let other_url = format!("http://{}", other.addr);
    let key = service_key(&app).await;
    expect_key(&app, &key.key, 201, "the key works").await;
    revoke_through_the_api(&app, &other_url, &key.id).await;
    publish_answers_within_wait(
        &app,
        &key.key,
        &app.partner_id,
        401,
        "the instance that held the key should refuse it once the other announced its revocation",
    )
    .await;
    quiesce().await;
}

#[hookd_test_macros::test]
async fn on_postgresql_a_partner_announced_gone_is_refused_when_the_notice_arrives() {
    if skip_postgres() {
        return;
    }
    let app = spawn_app(Backend::Postgres).await;
    let doomed = a_partner_held_then_removed(&app).await;
    let notify = format!("SELECT pg_notify('hookd_access', 'partner|{}')", doomed);
    sql(&app, &notify).await;
    publish_answers_within_wait(
        &app,
        &app.service_key,
        &doomed,
        422,
        "a partner announced gone should be forgotten when the notice arrives",
    )
    .await;
    quiesce().await;
}

#[hookd_test_macros::test]
async fn on_postgresql_an_instance_whose_listener_lost_its_connection_forgets_what_it_held() {
    if skip_postgres() {
        return;
    }
    let app = spawn_app(Backend::Postgres).await;
    let key = a_key_held_then_revoked_by_plain_sql(&app).await;
    // Notifications sent while the connection is down are lost: once back,
    // the instance cannot know what it missed.
    let cut = app
        .count(
            "SELECT COUNT(pg_terminate_backend(pid)) AS n FROM pg_stat_activity \
             WHERE query LIKE 'LISTEN%hookd_access%' AND pid <> pg_backend_pid() \
             AND datname = current_database()",
        )
        .await;
    assert_eq!(cut, 1, "the instance's listening connection is cut");
    publish_answers_within_wait(
        &app,
        &key.key,
        &app.partner_id,
        401,
        "back on its connection, the instance should look the key up again, and refuse it",
    )
    .await;
    quiesce().await;
}
