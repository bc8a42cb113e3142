//! SIGKILL during ingest and delivery: the real `hookd` binary as a child,
//! configured only through environment variables, killed while events are
//! being ingested and delivered. Every event whose ingest was acknowledged
//! must then reach every endpoint at least once (duplicates are allowed, loss
//! is not), and a request cut off by the kill is all or nothing.

use hookd_test_macros::both_backends;
use std::{
    cell::RefCell,
    collections::HashSet,
    rc::Rc,
    time::{Duration, Instant},
};

use hookd::{config::Config, store};

use super::received_ids;
use crate::harness::{
    self, SLOW,
    process::{Hookd, event_batch, healthy, post_events, prepare_endpoints},
    receiver::{Receiver, Reply},
    serve::serve_env,
};

const BATCHES: usize = 120;
const BATCH_SIZE: usize = 25;
/// Producers posting concurrently, so that the kill finds requests at
/// different stages (sent, being committed, being answered).
const PRODUCERS: usize = 3;
/// Acknowledged events before the kill...
const KILL_AFTER: usize = 300;
/// ...and at most this many, if no committed but unanswered batch is seen first.
const KILL_LATEST: usize = 500;

/// The last 3000 characters of a long log, for assertion messages.
fn tail(text: &str) -> &str {
    let start = text.char_indices().rev().nth(2999).map_or(0, |(i, _)| i);
    &text[start..]
}

/// The delivery's (state, attempt_count), for messages.
async fn delivery_state(
    db: &sea_orm::DatabaseConnection,
    event_id: &str,
    endpoint_id: &str,
) -> Option<(String, i32)> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    use store::entity::delivery;
    delivery::Entity::find()
        .filter(delivery::Column::EventId.eq(event_id))
        .filter(delivery::Column::EndpointId.eq(endpoint_id))
        .one(db)
        .await
        .ok()
        .flatten()
        .map(|d| (d.state, d.attempt_count))
}

/// One POST /v1/events: its event ids and its body.
struct Batch {
    ids: Vec<String>,
    body: String,
}

/// What the producers saw while ingesting.
#[derive(Default)]
struct IngestLog {
    /// Events of requests answered 201: committed.
    committed: Vec<String>,
    /// Requests that got no answer (the engine died under them): maybe committed.
    uncertain: Vec<Vec<String>>,
    /// Requests answered with anything but 201.
    refused: Vec<String>,
    /// Requests on their way, by the id of their first event.
    in_flight: Vec<String>,
    /// Producers that have sent all their batches.
    finished: usize,
}

/// One producer: posts its batches in order. A request without an answer is
/// noted as uncertain, and the next one waits (bounded) until hookd is back.
async fn produce(base_url: String, key: String, batches: Vec<Batch>, log: Rc<RefCell<IngestLog>>) {
    let http = awc::Client::builder()
        .timeout(Duration::from_secs(10))
        .finish();
    for batch in batches {
        log.borrow_mut().in_flight.push(batch.ids[0].clone());
        let result = post_events(&http, &base_url, &key, &batch.body).await;
        let lost_answer = {
            let mut l = log.borrow_mut();
            l.in_flight.retain(|id| *id != batch.ids[0]);
            match result {
                Ok((201, _)) => {
                    l.committed.extend(batch.ids);
                    false
                }
                Ok((status, retry_after)) => {
                    l.refused
                        .push(format!("{status} (retry-after {retry_after:?})"));
                    false
                }
                Err(_) => {
                    l.uncertain.push(batch.ids);
                    true
                }
            }
        };
        if lost_answer {
            let back = harness::wait_until(SLOW, || async {
                healthy(&http, &base_url).await.then_some(())
            })
            .await;
            if back.is_none() {
                log.borrow_mut()
                    .refused
                    .push(format!("hookd did not come back within {SLOW:?}"));
                break;
            }
        }
    }
    log.borrow_mut().finished += 1;
}

#[both_backends]
async fn a_killed_engine_loses_no_committed_event(backend: Backend) {
    let (url, _db_dir) = harness::database(backend).await;
    let work = tempfile::tempdir().expect("a working folder for hookd");
    let (listen, env) = serve_env(
        &url,
        &[
            ("HOOKD_DELIVERY__LEASE", "3s"),
            ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "2s"),
            ("HOOKD_LOG__FILTER", "warn"),
        ],
    );

    // Three slow-ish receivers, each an endpoint of the partner.
    let mut receivers = Vec::new();
    for _ in 0..3 {
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::Delay(
            Duration::from_millis(20),
            Box::new(Reply::status(200)),
        ));
        receivers.push(receiver);
    }
    let urls: Vec<String> = receivers
        .iter()
        .map(|r| format!("{}/hooks", r.url()))
        .collect();
    let prepared = prepare_endpoints(&url, &urls, 8).await;
    let config =
        Config::load(None, harness::test_env(&url, &[])).expect("the test configuration is valid");
    let db = store::connect(&config.database)
        .await
        .expect("the test database opens");

    // hookd runs, and the producers start sending.
    let base_url = format!("http://{listen}");
    let http = awc::Client::builder()
        .timeout(Duration::from_secs(5))
        .finish();
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "first-run");
    hookd.wait_healthy(&http, &base_url, SLOW).await;
    let log = Rc::new(RefCell::new(IngestLog::default()));
    let mut lanes: Vec<Vec<Batch>> = (0..PRODUCERS).map(|_| Vec::new()).collect();
    for i in 0..BATCHES {
        let (ids, body) = event_batch(&prepared.partner_id, BATCH_SIZE);
        lanes[i % PRODUCERS].push(Batch { ids, body });
    }
    let producers: Vec<_> = lanes
        .into_iter()
        .map(|lane| {
            let key = prepared.service_key.clone();
            actix_rt::spawn(produce(base_url.clone(), key, lane, log.clone()))
        })
        .collect();

    // Kill it while requests are on their way and deliveries are flowing;
    // if the chance comes, just after a batch committed and before its answer.
    let deadline = Instant::now() + SLOW;
    let mut kill_after_commit = false;
    loop {
        let (ready, latest, sent) = {
            let l = log.borrow();
            assert!(
                l.finished < PRODUCERS,
                "every batch was ingested before the kill: the kill would not hit ingest in flight"
            );
            assert!(
                l.refused.is_empty(),
                "ingest refused events before the kill: {:?}",
                l.refused
            );
            assert!(
                Instant::now() < deadline,
                "no ingest and delivery in flight within {SLOW:?}: {} events committed, receivers got {:?}; stderr:\n{}",
                l.committed.len(),
                receivers.iter().map(Receiver::count).collect::<Vec<_>>(),
                tail(&hookd.stderr())
            );
            let flowing = receivers.iter().all(|r| r.count() > 0);
            (
                l.committed.len() >= KILL_AFTER && flowing && !l.in_flight.is_empty(),
                l.committed.len() >= KILL_LATEST,
                l.in_flight.clone(),
            )
        };
        if ready {
            if latest {
                break;
            }
            let refs: Vec<&str> = sent.iter().map(String::as_str).collect();
            let stored = store::outbox::find(&db, &refs)
                .await
                .expect("the outbox query runs");
            let l = log.borrow();
            if stored
                .iter()
                .any(|e| l.in_flight.iter().any(|id| id == e.id.as_str()))
            {
                kill_after_commit = true;
                break;
            }
        }
        // Looking as often as possible: the moment to catch is short.
        actix_rt::time::sleep(Duration::from_millis(1)).await;
    }
    hookd.kill();
    let (committed_at_kill, in_flight_at_kill) = {
        let l = log.borrow();
        (l.committed.len(), l.in_flight.len())
    };
    eprintln!(
        "killed hookd with {in_flight_at_kill} ingest request(s) in flight{}, after {committed_at_kill} acknowledged events; the receivers had {:?} requests",
        if kill_after_commit {
            " (one of them already committed, its answer not yet read)"
        } else {
            ""
        },
        receivers.iter().map(Receiver::count).collect::<Vec<_>>()
    );

    // The same configuration starts again, and the producers go on.
    let mut hookd = Hookd::start(&["serve"], &env, work.path(), "second-run");
    hookd.wait_healthy(&http, &base_url, SLOW).await;
    for producer in producers {
        actix_rt::time::timeout(SLOW, producer)
            .await
            .expect("the producers should finish soon after the restart")
            .expect("a producer task should not panic");
    }

    let (committed, uncertain, refused) = {
        let l = log.borrow();
        (l.committed.clone(), l.uncertain.clone(), l.refused.clone())
    };
    assert!(
        refused.is_empty(),
        "ingest should accept every batch it answers: {refused:?}"
    );
    assert!(
        !uncertain.is_empty(),
        "the kill should have cut off at least one ingest request"
    );
    let mut expected: HashSet<String> = committed.iter().cloned().collect();
    for ids in &uncertain {
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let present = store::outbox::find(&db, &refs)
            .await
            .expect("the outbox query runs");
        assert!(
            present.is_empty() || present.len() == ids.len(),
            "a batch cut off by the kill is all or nothing, but {} of its {} events are in the outbox",
            present.len(),
            ids.len()
        );
        expected.extend(present.into_iter().map(|e| e.id.as_str().to_string()));
    }
    eprintln!(
        "{} committed events ({} acknowledged, {} cut-off request(s) of which {} events were committed)",
        expected.len(),
        committed.len(),
        uncertain.len(),
        expected.len() - committed.len()
    );

    // Every committed event reaches every endpoint.
    let all_arrived = harness::wait_until(SLOW, || async {
        receivers
            .iter()
            .all(|r| {
                r.count() >= expected.len() && {
                    let got = received_ids(r);
                    expected.iter().all(|id| got.contains_key(id))
                }
            })
            .then_some(())
    })
    .await;
    if all_arrived.is_none() {
        let mut report = String::new();
        for (receiver, endpoint) in receivers.iter().zip(&prepared.endpoint_ids) {
            let got = received_ids(receiver);
            let missing: Vec<&String> = expected
                .iter()
                .filter(|id| !got.contains_key(*id))
                .collect();
            report.push_str(&format!(
                "\n  endpoint {endpoint}: {} of {} missing",
                missing.len(),
                expected.len()
            ));
            for id in missing.iter().take(5) {
                let state = delivery_state(&db, id, endpoint).await;
                report.push_str(&format!("\n    {id}: delivery {state:?}"));
            }
        }
        panic!(
            "committed events were lost: not every endpoint received every committed event within {SLOW:?}:{report}\nstderr of the second run:\n{}",
            tail(&hookd.stderr())
        );
    }

    let mut duplicates = 0;
    let mut requests = 0;
    for receiver in &receivers {
        let got = received_ids(receiver);
        requests += got.values().sum::<usize>();
        duplicates += got.values().map(|n| n - 1).sum::<usize>();
    }
    eprintln!(
        "{backend:?}: nothing lost: {} events x 3 endpoints delivered in {requests} requests, {duplicates} duplicates",
        expected.len()
    );
    hookd.kill();
}
