//! A key revoked through one instance is refused by the others as soon as
//! PostgreSQL's notification (`hookd_access`) reaches them, well before the
//! entry each holds in memory could expire; a key made through one instance
//! works on the others at once.

use std::time::Instant;

use hookd::http::access::HELD_FOR;

use super::Fleet;
use crate::harness::{WAIT, call_raw, wait_until};

#[hookd_test_macros::test]
async fn a_key_revoked_on_one_instance_is_refused_by_another_before_its_entry_could_expire() {
    let Some((fleet, _)) = Fleet::registered(2, 1).await else {
        return;
    };
    let (first, second) = (&fleet.nodes[0].base_url, &fleet.nodes[1].base_url);
    let operator = &fleet.store.operator_key;
    let call = |base: &str, method: &str, path: &str, key: &str| {
        let (http, base, method, path, key) = (
            fleet.http.clone(),
            base.to_string(),
            method.to_string(),
            path.to_string(),
            key.to_string(),
        );
        async move { call_raw(&http, &base, &method, &path, &key, None).await }
    };
    let made = format!("/v1/admin/partners/{}/keys", fleet.store.partner_id);
    let (status, key, _) = call(first, "POST", &made, operator).await;
    assert_eq!(
        status, 201,
        "a key is made through the first instance: {key}"
    );
    let (id, key) = (
        key["id"].as_str().expect("an id").to_string(),
        key["key"].as_str().expect("a key").to_string(),
    );

    // The second instance finds the new key at once, and holds it from now.
    let held_since = Instant::now();
    let (status, body, _) = call(second, "GET", "/v1/endpoints", &key).await;
    assert_eq!(status, 200, "a key made elsewhere works at once: {body}");

    let (status, body, _) = call(first, "DELETE", &format!("/v1/admin/keys/{id}"), operator).await;
    assert_eq!(status, 204, "the key is revoked through the first: {body}");
    let (status, body, _) = call(first, "GET", "/v1/endpoints", &key).await;
    assert_eq!(
        status, 401,
        "the revoking instance refuses it at once: {body}"
    );

    let refused = wait_until(WAIT, || async {
        let (status, _, _) = call(second, "GET", "/v1/endpoints", &key).await;
        (status == 401).then(|| held_since.elapsed())
    })
    .await;
    let after = refused.unwrap_or_else(|| {
        panic!(
            "the second instance still accepts the revoked key after {WAIT:?}\n{}",
            fleet.logs()
        )
    });
    assert!(
        after < HELD_FOR,
        "the second instance should refuse the key when the notification arrives, \
         not when its entry expires ({after:?} after it found the key; entries are held {HELD_FOR:?})\n{}",
        fleet.logs()
    );
    fleet.assert_no_panic();
}
