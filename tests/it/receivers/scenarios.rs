//! What every example receiver must do against a live hookd (issue 12): a
//! normal delivery, a retry after a 5xx, a secret rotation overlap, a
//! duplicate, a stale version, forged and old requests, unknown types and
//! checks. `receiver_scenarios!` makes them tests for one receiver.

use std::time::Duration;

use hookd::secret::Secret;
use serde_json::{Value, json};

pub use super::documented::every_documented_event_and_catalog_example_is_applied;
pub use super::durability::{
    a_receipt_committed_but_answered_after_hookds_timeout_is_retried_and_applied_once,
    a_receiver_killed_after_acknowledging_and_before_applying_catches_up_from_its_inbox,
};
use super::{
    InboxRow, ReceiverUnderTest,
    bed::{Bed, Headers},
};

/// Makes every scenario a test for the receiver `$spec` describes.
#[macro_export]
macro_rules! receiver_scenarios {
    ($spec:expr) => {
        $crate::receiver_scenarios!(@each $spec;
            a_delivered_event_is_stored_once_and_applied,
            a_receiver_that_cannot_store_answers_5xx_and_hookd_retries,
            only_the_old_or_only_the_new_secret_verifies_during_a_rotation,
            a_replayed_event_is_acknowledged_and_not_applied_again,
            an_older_version_of_a_subject_is_not_applied_after_a_newer_one,
            forged_and_old_requests_are_refused_and_not_stored,
            data_that_does_not_match_the_published_schema_is_refused_with_422,
            unknown_types_and_checks_are_acknowledged_and_given_to_no_handler,
            the_receiver_passes_every_case_of_the_conformance_check,
            every_documented_event_and_catalog_example_is_applied,
            a_receipt_committed_but_answered_after_hookds_timeout_is_retried_and_applied_once,
            a_receiver_killed_after_acknowledging_and_before_applying_catches_up_from_its_inbox,
        );
    };
    (@each $spec:expr; $($name:ident),+ $(,)?) => {
        $(
            #[hookd_test_macros::test]
            async fn $name() {
                $crate::receivers::scenarios::$name(&$spec).await;
                $crate::harness::quiesce().await;
            }
        )+
    };
}

/// A `customer.status_changed` at `version` of customer `id`.
fn customer(id: &str, version: i64, status: &str) -> Value {
    json!({
        "type": "customer.status_changed", "schema_version": 1,
        "subject": {"type": "customer", "id": id, "version": version},
        "data": {"customer_id": id, "status": status, "previous_status": "active"},
    })
}

/// A `usage.finalized` fact, booked once per `usage_id`.
fn usage(usage_id: &str) -> Value {
    json!({
        "type": "usage.finalized", "schema_version": 1,
        "subject": {"type": "usage_record", "id": usage_id},
        "data": {"customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800", "usage_id": usage_id},
    })
}

/// An envelope as hookd sends it, for requests the harness signs itself.
fn envelope(id: &str, event_type: &str, data: Value) -> String {
    json!({
        "event_id": id, "type": event_type, "occurred_at": "2026-12-01T10:00:00Z",
        "partner_id": "ptn_direct", "subject": {"type": "customer", "id": "cus_direct", "version": 1},
        "schema_version": 1, "data": data,
    })
    .to_string()
}

fn wall_clock() -> i64 {
    chrono::Utc::now().timestamp()
}

fn expect_applied(row: &InboxRow) {
    assert_eq!(
        (row.status.as_str(), row.received_count),
        ("applied", 1),
        "{row:?}"
    );
}

pub async fn a_delivered_event_is_stored_once_and_applied(spec: &ReceiverUnderTest) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let (state, row) = bed.deliver(customer("cus_1", 1, "suspended")).await;
    expect_applied(&row);
    let (fact, row) = bed.deliver(usage("usage_1")).await;
    expect_applied(&row);

    let snapshot = bed.receiver.snapshot().await;
    let subject = snapshot
        .subject("customer", "cus_1")
        .unwrap_or_else(|| panic!("the customer's state is applied: {snapshot:#?}"));
    assert_eq!(
        (subject.version, subject.event_id.as_str()),
        (Some(1), state.as_str())
    );
    let booked = snapshot.booked("usage", "usage_1");
    assert_eq!(booked.len(), 1, "the usage is booked once: {snapshot:#?}");
    assert_eq!(booked[0].event_id, fact);
}

pub async fn a_receiver_that_cannot_store_answers_5xx_and_hookd_retries(spec: &ReceiverUnderTest) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let hold = bed.receiver.hold_inbox().await;
    let id = bed.publish(usage("usage_retry")).await;
    let first = bed.attempts(&id, 1).await.remove(0);
    assert!(
        matches!(first.0, Some(500..=599)),
        "{} answered {first:?} while it could not store: it must not acknowledge, and a 5xx makes hookd retry",
        spec.name
    );
    assert!(
        bed.receiver.snapshot().await.received(&id).is_empty(),
        "nothing is stored while the inbox is locked"
    );
    hold.release().await;

    // The second attempt is due 5 s (± 20 %) after the first.
    bed.app.advance(Duration::from_secs(7));
    bed.delivered(&id).await;
    let attempts = bed.attempts(&id, 2).await;
    assert_eq!(attempts.len(), 2, "one retry delivered it: {attempts:?}");
    expect_applied(&bed.receiver.processed(&id).await);
    assert_eq!(
        bed.receiver
            .snapshot()
            .await
            .booked("usage", "usage_retry")
            .len(),
        1
    );
}

pub async fn only_the_old_or_only_the_new_secret_verifies_during_a_rotation(
    spec: &ReceiverUnderTest,
) {
    let Some(mut bed) = Bed::start(spec).await else {
        return;
    };
    let old = bed.secret.clone();
    // Secrets are ordered by creation time: rotate a while after creating.
    bed.app.advance(Duration::from_secs(1));
    let rotate = format!("/v1/endpoints/{}/secret/rotate", bed.endpoint);
    let (status, rotated, _) = bed
        .app
        .request(
            "POST",
            &rotate,
            &bed.key,
            Some(&json!({"overlap_seconds": 3600})),
        )
        .await;
    assert_eq!(status, 200, "{rotated}");
    let new = Secret::parse(rotated["secret"].as_str().expect("the new secret")).expect("whsec_");

    // The receiver still holds only the old secret.
    let (_, row) = bed.deliver(usage("usage_rotate_old")).await;
    expect_applied(&row);
    // Switched to only the new one.
    bed.receiver.start(&[&new]).await;
    let (_, row) = bed.deliver(usage("usage_rotate_new")).await;
    expect_applied(&row);

    // Once the overlap ends, a receiver left on the old secret refuses.
    let expire = format!("/v1/endpoints/{}/secret/expire-previous", bed.endpoint);
    let (status, body, _) = bed.app.request("POST", &expire, &bed.key, None).await;
    assert_eq!(status, 200, "{body}");
    bed.receiver.start(&[&old]).await;
    let id = bed.publish(usage("usage_rotate_gone")).await;
    let first = bed.attempts(&id, 1).await.remove(0);
    assert!(
        matches!(first.0, Some(400..=499)),
        "a request signed only with the new secret is refused by a receiver with only the old one: {first:?}"
    );
    assert!(bed.receiver.snapshot().await.received(&id).is_empty());
}

pub async fn a_replayed_event_is_acknowledged_and_not_applied_again(spec: &ReceiverUnderTest) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let (id, row) = bed.deliver(usage("usage_dup")).await;
    expect_applied(&row);
    let list = format!("/v1/deliveries?event_id={id}&endpoint_id={}", bed.endpoint);
    let (_, page, _) = bed.app.request("GET", &list, &bed.key, None).await;
    let delivery = page["data"][0]["id"]
        .as_str()
        .expect("the delivery")
        .to_string();
    let replay = format!("/v1/deliveries/{delivery}/replay");
    let (status, body, _) = bed.app.request("POST", &replay, &bed.key, None).await;
    assert_eq!(status, 202, "{body}");

    let replayed = bed.attempts(&id, 2).await.remove(1);
    assert!(
        matches!(replayed.0, Some(200..=299)),
        "a duplicate is acknowledged: {replayed:?}"
    );
    let snapshot = bed.receiver.snapshot().await;
    let rows = snapshot.received(&id);
    assert_eq!(rows.len(), 1, "one inbox row per webhook-id: {snapshot:#?}");
    assert_eq!(
        (rows[0].status.as_str(), rows[0].received_count),
        ("applied", 2),
        "the replay reached the receiver and was not applied again"
    );
    assert_eq!(
        snapshot.booked("usage", "usage_dup").len(),
        1,
        "booked once: {snapshot:#?}"
    );
}

pub async fn an_older_version_of_a_subject_is_not_applied_after_a_newer_one(
    spec: &ReceiverUnderTest,
) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let (newer, row) = bed.deliver(customer("cus_stale", 2, "closed")).await;
    expect_applied(&row);
    let (_, row) = bed.deliver(customer("cus_stale", 1, "suspended")).await;
    assert_eq!(row.status, "stale", "version 1 after version 2: {row:?}");
    let snapshot = bed.receiver.snapshot().await;
    let subject = snapshot
        .subject("customer", "cus_stale")
        .expect("the customer");
    assert_eq!(
        (subject.version, subject.event_id.as_str()),
        (Some(2), newer.as_str()),
        "the state stays at version 2"
    );
    let (newest, row) = bed.deliver(customer("cus_stale", 3, "active")).await;
    expect_applied(&row);
    let snapshot = bed.receiver.snapshot().await;
    let subject = snapshot
        .subject("customer", "cus_stale")
        .expect("the customer");
    assert_eq!(subject.event_id, newest, "a newer version still applies");
}

pub async fn forged_and_old_requests_are_refused_and_not_stored(spec: &ReceiverUnderTest) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let data = json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "9.99", "usage_id": "usage_forged"});
    let id = hookd::domain::ids::new_id("evt");
    let body = envelope(&id, "usage.finalized", data.clone());
    let now = wall_clock();
    let good = std::slice::from_ref(&bed.secret);
    let mut unsigned = Bed::signed(good, &id, now, &body);
    unsigned.pop();
    let mut unknown_scheme = Bed::signed(good, &id, now, &body);
    unknown_scheme[2].1 = unknown_scheme[2].1.replacen("v1,", "v2,", 1);
    let changed = body.replace("9.99", "0.01");
    let cases: Vec<(&str, Headers, &str)> = vec![
        (
            "signed with another secret",
            Bed::signed(&[Secret::generate()], &id, now, &body),
            &body,
        ),
        ("without a signature", unsigned, &body),
        (
            "a body changed after signing",
            Bed::signed(good, &id, now, &body),
            &changed,
        ),
        (
            "a timestamp 10 minutes old",
            Bed::signed(good, &id, now - 600, &body),
            &body,
        ),
        (
            "a timestamp 10 minutes ahead",
            Bed::signed(good, &id, now + 600, &body),
            &body,
        ),
        ("only a scheme it does not know", unknown_scheme, &body),
    ];
    for (case, headers, sent) in &cases {
        let (status, text) = bed
            .receiver
            .post(&bed.app.http, headers, sent.as_bytes())
            .await;
        assert!(
            (400..=499).contains(&status),
            "{case}: {} answered {status} {text:?}; it must refuse with a 4xx",
            spec.name
        );
    }
    // The control: the same event, signed and on time, is taken; so the
    // refusals above were about the signature and the time, nothing else.
    let (status, text) = bed
        .receiver
        .post(
            &bed.app.http,
            &Bed::signed(good, &id, wall_clock(), &body),
            body.as_bytes(),
        )
        .await;
    assert!(
        (200..=299).contains(&status),
        "a valid request: {status} {text:?}"
    );
    expect_applied(&bed.receiver.processed(&id).await);
    let snapshot = bed.receiver.snapshot().await;
    assert_eq!(
        snapshot.inbox.len(),
        1,
        "only the valid request is stored: {snapshot:#?}"
    );
}

pub async fn unknown_types_and_checks_are_acknowledged_and_given_to_no_handler(
    spec: &ReceiverUnderTest,
) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let unknown = json!({
        "type": "loyalty.points_awarded",
        "subject": {"type": "customer", "id": "cus_unknown", "version": 5},
        "data": {"customer_id": "cus_unknown", "points": 10},
    });
    let (_, row) = bed.deliver(unknown).await;
    assert_eq!(
        (row.status.as_str(), row.event_type.as_str()),
        ("ignored", "loyalty.points_awarded"),
        "an unknown type is acknowledged and ignored: {row:?}"
    );

    let test = format!("/v1/endpoints/{}/test", bed.endpoint);
    let (status, sent, _) = bed.app.request("POST", &test, &bed.key, None).await;
    assert_eq!(status, 202, "{sent}");
    let id = sent["event_id"]
        .as_str()
        .expect("the test event")
        .to_string();
    bed.delivered(&id).await;
    assert_eq!(bed.receiver.processed(&id).await.status, "test");

    // A conformance-check event, as `hookd check-receiver` sends it.
    let id = hookd::domain::ids::new_id("evt");
    let body = envelope(
        &id,
        "webhook.check",
        json!({"customer_id": "cus_direct", "status": "closed"}),
    );
    let mut headers = Bed::signed(std::slice::from_ref(&bed.secret), &id, wall_clock(), &body);
    headers.push(("webhook-check", "conformance".into()));
    let (status, text) = bed
        .receiver
        .post(&bed.app.http, &headers, body.as_bytes())
        .await;
    assert!(
        (200..=299).contains(&status),
        "a check is acknowledged: {status} {text:?}"
    );
    assert_eq!(bed.receiver.processed(&id).await.status, "test");

    let snapshot = bed.receiver.snapshot().await;
    assert!(
        snapshot.subjects.is_empty() && snapshot.ledger.is_empty(),
        "no business handler ran: {snapshot:#?}"
    );
}

pub async fn the_receiver_passes_every_case_of_the_conformance_check(spec: &ReceiverUnderTest) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let check = format!("/v1/endpoints/{}/check", bed.endpoint);
    let (status, card, _) = bed.app.request("POST", &check, &bed.key, None).await;
    assert_eq!(status, 200, "{card}");
    let failed: Vec<&Value> = card["cases"]
        .as_array()
        .expect("the scorecard's cases")
        .iter()
        .filter(|c| c["passed"] != true)
        .collect();
    assert!(
        card["passed"] == true && failed.is_empty(),
        "{} fails the conformance check: {failed:#?}",
        spec.name
    );
}

/// An event whose `data` does not match the published schema (a producer
/// on another catalog, a hand-made request) is refused with 422 and not
/// stored; the same event with valid `data` is taken.
pub async fn data_that_does_not_match_the_published_schema_is_refused_with_422(
    spec: &ReceiverUnderTest,
) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let valid = json!({"customer_id": "cus_204", "currency": "USD", "final_cost": "1.00", "usage_id": "usage_schema"});
    let mut undeclared = valid.clone();
    undeclared["prompt"] = json!("the customer's raw prompt");
    let mut malformed = valid.clone();
    malformed["final_cost"] = json!(1.0);
    let good = std::slice::from_ref(&bed.secret);
    for (case, data) in [
        ("an undeclared field", undeclared),
        ("a number for money", malformed),
    ] {
        let id = hookd::domain::ids::new_id("evt");
        let body = envelope(&id, "usage.finalized", data);
        let headers = Bed::signed(good, &id, wall_clock(), &body);
        let (status, text) = bed
            .receiver
            .post(&bed.app.http, &headers, body.as_bytes())
            .await;
        assert_eq!(
            status, 422,
            "{case}: {} answered {status} {text:?}",
            spec.name
        );
    }
    let snapshot = bed.receiver.snapshot().await;
    assert!(
        snapshot.inbox.is_empty(),
        "nothing refused is stored: {snapshot:#?}"
    );
    let id = hookd::domain::ids::new_id("evt");
    let body = envelope(&id, "usage.finalized", valid);
    let headers = Bed::signed(good, &id, wall_clock(), &body);
    let (status, text) = bed
        .receiver
        .post(&bed.app.http, &headers, body.as_bytes())
        .await;
    assert!(
        (200..=299).contains(&status),
        "valid data is taken: {status} {text:?}"
    );
    expect_applied(&bed.receiver.processed(&id).await);
}
