//! What a receiver's inbox must survive, against a live hookd: an answer
//! that comes after hookd stopped waiting (the receiver committed; hookd
//! retries; the receiver acknowledges the duplicate and applies nothing
//! twice), and a crash after acknowledging and before applying (the receiver
//! catches up from its inbox when it starts again, with no help from hookd).

use std::{net::SocketAddr, time::Duration};

use serde_json::json;

use super::{ReceiverUnderTest, bed::Bed};
use crate::harness::{SLOW, slow_answer::SlowAnswer, wait_until};

/// A `usage.finalized` fact, booked once per `usage_id`.
fn usage(usage_id: &str) -> serde_json::Value {
    json!({"type": "usage.finalized", "schema_version": 2, "data": {
        "customer_id": "cus_204", "currency": "USD", "final_cost": "1.274800",
        "usage_id": usage_id, "model": "gpt-4o-mini", "input_tokens": 41200,
        "output_tokens": 7013, "api_key_id": "key_7781"}})
}

/// Points the bed's endpoint at `url` over the Partner API.
async fn point_at(bed: &Bed, url: &str) {
    let path = format!("/v1/endpoints/{}", bed.endpoint);
    let body = json!({ "url": url });
    let (status, answer, _) = bed.app.request("PATCH", &path, &bed.key, Some(&body)).await;
    assert_eq!(status, 200, "the endpoint moves to {url}: {answer}");
}

pub async fn a_receipt_committed_but_answered_after_hookds_timeout_is_retried_and_applied_once(
    spec: &ReceiverUnderTest,
) {
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    let receiver: SocketAddr = bed.receiver.url()["http://".len()..]
        .split('/')
        .next()
        .and_then(|a| a.parse().ok())
        .expect("the receiver's address");
    // The bed's request timeout is 5 s: the answer comes 8 s late.
    let slow = SlowAnswer::start(receiver, Duration::from_secs(8)).await;
    point_at(&bed, &format!("http://{}/webhooks", slow.addr)).await;
    slow.hold(true);

    let id = bed.publish(usage("usage_slow")).await;
    let first = bed.app.attempts_when(&id, &bed.endpoint, 1).await.remove(0);
    assert_eq!(
        first.error_category.as_deref(),
        Some("timeout"),
        "hookd gave up waiting: {first:?}"
    );
    let row = bed.receiver.processed(&id).await;
    assert_eq!(
        (row.status.as_str(), row.received_count),
        ("applied", 1),
        "{} committed (and applied) the event before hookd stopped waiting",
        spec.name
    );

    slow.hold(false);
    // The retry is due 5 s (± 20 %) after the first attempt.
    bed.app.advance(Duration::from_secs(7));
    bed.delivered(&id).await;
    let snapshot = bed.receiver.snapshot().await;
    let rows = snapshot.received(&id);
    assert_eq!(
        (rows.len(), rows[0].status.as_str(), rows[0].received_count),
        (1, "applied", 2),
        "the retry reached {} as a duplicate of the same webhook-id: {snapshot:#?}",
        spec.name
    );
    assert_eq!(
        snapshot.booked("usage", "usage_slow").len(),
        1,
        "booked once, though delivered twice: {snapshot:#?}"
    );
}

/// How many bursts may pass without a kill that leaves a row pending.
const TRIES: usize = 6;

pub async fn a_receiver_killed_after_acknowledging_and_before_applying_catches_up_from_its_inbox(
    spec: &ReceiverUnderTest,
) {
    // Retries every 5 s and no circuit: the test's clock moves on in small
    // steps, as the receiver refuses a signature more than 5 minutes ahead
    // of its own clock (a kill can cost two attempts at once, and the
    // usual schedule's third waits 5 minutes).
    let settings = [
        (
            "HOOKD_DELIVERY__SCHEDULE",
            r#"["0s","5s","5s","5s","5s","5s","5s","5s"]"#,
        ),
        ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1000"),
    ];
    let Some(mut bed) = Bed::start_with(spec, &settings).await else {
        return;
    };
    let mut events = Vec::new();
    let mut left_pending = 0;
    for round in 0..TRIES {
        // A burst, and a SIGKILL the moment the inbox holds a row it has
        // stored and not yet applied.
        let burst: Vec<_> = (0..40)
            .map(|i| {
                let mut e = usage(&format!("usage_{round}_{i}"));
                e["partner_id"] = json!(bed.app.partner_id);
                e
            })
            .collect();
        let (status, body) = bed.app.post_events(&json!(burst)).await;
        assert_eq!(status, 201, "the burst is accepted: {body}");
        let ids: Vec<String> = body["data"]
            .as_array()
            .expect("the accepted events")
            .iter()
            .map(|e| e["event_id"].as_str().expect("an id").to_string())
            .collect();
        events.extend(ids.iter().cloned());
        // A row pending, or the whole burst applied before a poll saw one.
        let seen = wait_until(SLOW, || async {
            let snapshot = bed.receiver.snapshot().await;
            if snapshot.inbox.iter().any(|r| r.status == "pending") {
                return Some(true);
            }
            let applied = |id: &String| {
                snapshot
                    .received(id)
                    .first()
                    .is_some_and(|r| r.status == "applied")
            };
            ids.iter().all(applied).then_some(false)
        })
        .await;
        bed.receiver.stop();
        assert!(
            seen.is_some(),
            "{} neither stored nor applied the burst within {SLOW:?}\nstderr:\n{}",
            spec.name,
            bed.receiver.stderr()
        );
        left_pending = pending(&bed).await;
        if left_pending > 0 {
            break;
        }
        // Everything through before the next burst.
        bed.receiver.start(&[&bed.secret]).await;
        all_delivered(&bed, &events).await;
    }
    assert!(
        left_pending > 0,
        "in {TRIES} bursts, no kill left an acknowledged row unapplied"
    );

    // Nothing of hookd's goes out now (the attempts the kill cut are
    // recorded, their retries due on the stopped test clock): what the
    // receiver applies now, it applies from its inbox.
    settle(&bed).await;
    bed.receiver.start(&[&bed.secret]).await;
    let caught_up = wait_until(SLOW, || async { (pending(&bed).await == 0).then_some(()) }).await;
    assert!(
        caught_up.is_some(),
        "{} left {} rows pending after it started again: {:#?}\nstderr:\n{}",
        spec.name,
        pending(&bed).await,
        bed.receiver.snapshot().await,
        bed.receiver.stderr()
    );

    // hookd's retries (the attempts the kill cut) arrive as duplicates.
    all_delivered(&bed, &events).await;
    for id in &events {
        bed.receiver.processed(id).await;
    }
    let snapshot = bed.receiver.snapshot().await;
    for id in &events {
        let rows = snapshot.received(id);
        if rows.len() != 1 {
            let attempts = bed.app.attempts(id, &bed.endpoint).await;
            panic!(
                "{id} is stored once, not {} times; hookd's attempts: {attempts:#?}\n{}",
                rows.len(),
                bed.receiver.stderr()
            );
        }
        assert_eq!(
            rows[0].status,
            "applied",
            "{id}: {:?}\n{}",
            rows[0],
            bed.receiver.stderr()
        );
    }
    let booked = snapshot.ledger.len();
    assert_eq!(
        booked,
        events.len(),
        "each usage is booked once: {snapshot:#?}"
    );
}

/// The rows the receiver stored and has not applied.
async fn pending(bed: &Bed) -> usize {
    let snapshot = bed.receiver.snapshot().await;
    snapshot
        .inbox
        .iter()
        .filter(|r| r.status == "pending")
        .count()
}

/// Waits until hookd has recorded no new attempt for a second.
async fn settle(bed: &Bed) {
    let sql = format!(
        "SELECT COUNT(*) AS n FROM attempt a JOIN delivery d ON d.id = a.delivery_id \
         WHERE d.endpoint_id = '{}'",
        bed.endpoint
    );
    let deadline = std::time::Instant::now() + SLOW;
    let mut last = bed.app.count(&sql).await;
    loop {
        actix_rt::time::sleep(Duration::from_secs(1)).await;
        let now = bed.app.count(&sql).await;
        if now == last {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "hookd kept attempting for {SLOW:?}"
        );
        last = now;
    }
}

/// Moves the test clock on through the kill test's retry schedule (every
/// 5 s ± 20 %), one retry at a time, until every event is delivered.
async fn all_delivered(bed: &Bed, events: &[String]) {
    for _ in 0..7 {
        bed.app.advance(Duration::from_secs(7));
        let done = wait_until(Duration::from_secs(20), || async {
            for id in events {
                if bed.app.delivery_row(id, &bed.endpoint).await.state != "delivered" {
                    return None;
                }
            }
            Some(())
        })
        .await;
        if done.is_some() {
            return;
        }
    }
    for id in events {
        let row = bed.app.delivery_row(id, &bed.endpoint).await;
        if row.state != "delivered" {
            let attempts = bed.app.attempts(id, &bed.endpoint).await;
            panic!(
                "{id} is {} after the whole retry schedule; hookd's attempts: {attempts:#?}\n{}",
                row.state,
                bed.receiver.stderr()
            );
        }
    }
}
