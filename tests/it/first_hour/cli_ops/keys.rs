//! Keys through the CLI: listed without a secret, by role and partner; a
//! revoked one is refused by the API within seconds, listed only with
//! `--all`, and audited.

use hookd_test_macros::both_backends;
use serde_json::{Value, json};

use hookd::http::access::HELD_FOR;

use super::bed::{Bed, assert_refused, cli_entry};
use crate::harness::{Backend, WAIT, wait_until};

/// The partner key's entry in `hookd key list --json`, found by its prefix.
async fn listed_partner_key(bed: &Bed) -> Value {
    let key = &bed.store.partner_key;
    let listed = bed.cli_json(&["key", "list"]).await;
    listed["data"]
        .as_array()
        .expect("a page")
        .iter()
        .find(|k| {
            k["prefix"]
                .as_str()
                .is_some_and(|p| key.starts_with(p.trim_end_matches('…')))
        })
        .unwrap_or_else(|| panic!("the partner key is listed by its prefix: {listed}"))
        .clone()
}

/// A bed whose partner key worked, then was revoked by the CLI: the bed,
/// the key's id, and what `key revoke` printed.
async fn a_revoked_partner_key(backend: Backend) -> (Bed, String, Value) {
    let bed = Bed::start(backend, &["/a"]).await;
    let key = bed.store.partner_key.clone();
    let (status, _) = bed.api("GET", "/v1/endpoints", &key, None).await;
    assert_eq!(status, 200, "the partner key works");
    let id = listed_partner_key(&bed).await["id"]
        .as_str()
        .expect("an id")
        .to_string();
    let revoked = bed.cli_json(&["key", "revoke", &id]).await;
    (bed, id, revoked)
}

#[both_backends]
async fn no_key_list_of_the_cli_shows_a_key(backend: Backend) {
    let bed = Bed::start(backend, &["/a"]).await;
    let out = bed.cli(&["key", "list", "--json"]).await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    for k in [
        &bed.store.partner_key,
        &bed.store.service_key,
        &bed.store.operator_key,
    ] {
        assert!(
            !text.contains(k.as_str()),
            "a key list shows no key: {text}"
        );
    }
    let plain = bed.cli(&["key", "list"]).await;
    assert!(
        !String::from_utf8_lossy(&plain.stdout).contains(bed.store.partner_key.as_str()),
        "nor does the table"
    );
}

#[both_backends]
async fn the_cli_lists_a_key_with_its_role_and_partner_and_by_partner(backend: Backend) {
    let bed = Bed::start(backend, &["/a"]).await;
    let mine = listed_partner_key(&bed).await;
    assert_eq!(mine["role"], "partner");
    assert_eq!(mine["partner_id"], json!(bed.store.partner_id));
    let partner = &bed.store.partner_id;
    let of_partner = bed.cli_json(&["key", "list", "--partner", partner]).await;
    assert_eq!(
        of_partner["data"].as_array().map(Vec::len),
        Some(1),
        "{of_partner}"
    );
}

/// The API holds a key it found valid for `access::HELD_FOR`: the CLI is
/// another process, so `serve` learns of the revocation through PostgreSQL's
/// notification (at once), or on SQLite when its entry expires.
#[both_backends]
async fn a_key_revoked_by_the_cli_is_refused_by_the_api_within_the_bound_and_audited(
    backend: Backend,
) {
    let (bed, id, revoked) = a_revoked_partner_key(backend).await;
    assert!(revoked["revoked_at"].is_string(), "{revoked}");
    let key = &bed.store.partner_key;
    let refused = wait_until(HELD_FOR + WAIT, || async {
        let (status, body) = bed.api("GET", "/v1/endpoints", key, None).await;
        (status == 401).then_some(body)
    })
    .await;
    assert!(
        refused.is_some(),
        "the API refuses a key revoked by the CLI within {HELD_FOR:?}"
    );
    let entry = cli_entry(&bed.audit(&id).await, "key.revoke");
    assert_eq!(entry["partner_id"], json!(bed.store.partner_id), "{entry}");
}

#[both_backends]
async fn revoking_a_revoked_key_again_exits_3(backend: Backend) {
    let (bed, id, _) = a_revoked_partner_key(backend).await;
    let again = bed.cli(&["key", "revoke", &id]).await;
    let err = assert_refused(&again, 3, "a second revoke");
    assert!(err.contains("already revoked"), "{err}");
}

#[both_backends]
async fn revoked_keys_are_listed_only_with_all(backend: Backend) {
    let (bed, id, _) = a_revoked_partner_key(backend).await;
    let active = bed.cli_json(&["key", "list"]).await;
    assert!(
        !active.to_string().contains(&id),
        "revoked keys are left out by default: {active}"
    );
    let all = bed.cli_json(&["key", "list", "--all"]).await;
    assert!(all.to_string().contains(&id), "--all shows them: {all}");
}
