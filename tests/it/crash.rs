//! Nothing lost: a killed engine, a database that is not there at start, and a
//! database that goes away while the engine runs.
//!
//! The kill test runs the real `hookd` binary as a child process, configured
//! only through environment variables, and SIGKILLs it while events are being
//! ingested and delivered. Every event whose ingest was acknowledged must then
//! reach every endpoint at least once (duplicates are allowed, loss is not).

use std::{
    cell::RefCell,
    collections::{HashMap, HashSet},
    process::ExitStatus,
    rc::Rc,
    time::{Duration, Instant},
};

use hookd::{
    config::Config,
    domain::ids::new_id,
    secret::SecretBox,
    store::{
        self,
        endpoints::{EndpointStatus, NewEndpoint},
        keys::Role,
    },
};
use serde_json::{Value, json};

use crate::{
    harness::{
        self, Backend, MASTER_KEY,
        process::{Hookd, free_port, healthy},
        receiver::{Receiver, Reply},
    },
    on_both_backends,
};

/// The last part of a long log, for assertion messages.
fn tail(text: &str) -> &str {
    let start = text.len().saturating_sub(3000);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

// ---------------------------------------------------------------------------------------------
// Helpers: ingesting while the engine dies

/// One POST /v1/events: its event ids and its body.
struct Batch {
    ids: Vec<String>,
    body: String,
}

fn batches(partner_id: &str, count: usize, size: usize) -> Vec<Batch> {
    (0..count)
        .map(|b| {
            let ids: Vec<String> = (0..size).map(|_| new_id("evt")).collect();
            let events: Vec<Value> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    json!({
                        "event_id": id,
                        "type": "usage.finalized",
                        "schema_version": 1,
                        "partner_id": partner_id,
                        "data": {"batch": b, "n": i, "customer_id": "cus_204", "final_cost": "1.20", "currency": "USD"},
                    })
                })
                .collect();
            Batch {
                body: Value::Array(events).to_string(),
                ids,
            }
        })
        .collect()
}

/// What the producer saw while ingesting.
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

async fn post_batch(
    http: &awc::Client,
    base_url: &str,
    key: &str,
    body: &str,
) -> Result<(u16, String), String> {
    let mut res = http
        .post(format!("{base_url}/v1/events"))
        .insert_header(("authorization", format!("Bearer {key}")))
        .insert_header(("content-type", "application/json"))
        .send_body(body.to_string())
        .await
        .map_err(|e| e.to_string())?;
    let bytes = res
        .body()
        .limit(16 * 1024 * 1024)
        .await
        .map_err(|e| e.to_string())?;
    Ok((
        res.status().as_u16(),
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// One producer: posts its batches in order. A request without an answer is
/// noted as uncertain, and the next one waits (bounded) until hookd is back.
async fn produce(base_url: String, key: String, batches: Vec<Batch>, log: Rc<RefCell<IngestLog>>) {
    let http = awc::Client::builder()
        .timeout(Duration::from_secs(10))
        .finish();
    for batch in batches {
        log.borrow_mut().in_flight.push(batch.ids[0].clone());
        let result = post_batch(&http, &base_url, &key, &batch.body).await;
        let lost_answer = {
            let mut l = log.borrow_mut();
            l.in_flight.retain(|id| *id != batch.ids[0]);
            match result {
                Ok((201, _)) => {
                    l.committed.extend(batch.ids);
                    false
                }
                Ok((status, body)) => {
                    l.refused.push(format!("{status}: {body}"));
                    false
                }
                Err(_) => {
                    l.uncertain.push(batch.ids);
                    true
                }
            }
        };
        if lost_answer {
            let back = harness::wait_until(Duration::from_secs(60), || async {
                healthy(&http, &base_url).await.then_some(())
            })
            .await;
            if back.is_none() {
                log.borrow_mut()
                    .refused
                    .push("hookd did not come back within 60 s".into());
                break;
            }
        }
    }
    log.borrow_mut().finished += 1;
}

/// How many times each event id reached the receiver.
fn received_ids(receiver: &Receiver) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for r in receiver.received() {
        if let Some(id) = r.header("webhook-id") {
            *ids.entry(id.to_string()).or_default() += 1;
        }
    }
    ids
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

// ---------------------------------------------------------------------------------------------
// 1. SIGKILL during ingest and delivery

const BATCHES: usize = 120;
const BATCH_SIZE: usize = 25;
/// Producers posting concurrently, so that the kill finds requests at
/// different stages (sent, being committed, being answered).
const PRODUCERS: usize = 3;
/// Acknowledged events before the kill...
const KILL_AFTER: usize = 300;
/// ...and at most this many, if no committed but unanswered batch is seen first.
const KILL_LATEST: usize = 500;

on_both_backends!(
    a_killed_engine_loses_no_committed_event,
    |backend| async move {
        let (url, _db_dir) = harness::database(backend).await;
        let work = tempfile::tempdir().expect("a working folder for hookd");
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let env = harness::test_env(
            &url,
            &[
                ("HOOKD_HTTP__LISTEN", &listen),
                ("HOOKD_DELIVERY__LEASE", "3s"),
                ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "2s"),
                ("HOOKD_LOG__FILTER", "warn"),
            ],
        );

        // The database, prepared in process: a partner, a service key, three endpoints.
        let config = Config::load(None, harness::test_env(&url, &[]))
            .expect("the test configuration is valid");
        let db = store::connect(&config.database)
            .await
            .expect("the test database opens");
        store::migrate(&db)
            .await
            .expect("the test database migrates");
        let now = chrono::Utc::now().timestamp_millis();
        let partner = store::partners::create(&db, None, "Acme", now)
            .await
            .expect("a partner");
        let key = store::keys::create(&db, Role::Service, None, now)
            .await
            .expect("a service key")
            .key;
        let secrets = SecretBox::from_passphrase(MASTER_KEY).expect("the test master key is valid");
        let mut receivers = Vec::new();
        let mut endpoints = Vec::new();
        for _ in 0..3 {
            let receiver = Receiver::start().await;
            receiver.set_default(Reply::Delay(
                Duration::from_millis(20),
                Box::new(Reply::status(200)),
            ));
            let new = NewEndpoint {
                partner_id: partner.id.clone(),
                url: format!("{}/hooks", receiver.url()),
                description: String::new(),
                event_types: Vec::new(),
                concurrency: 8,
                rate_limit: None,
                schema_version: None,
                schema_versions: Default::default(),
                status: EndpointStatus::Active,
            };
            let (endpoint, _) = store::endpoints::create(&db, &secrets, new, now)
                .await
                .expect("an endpoint");
            endpoints.push(endpoint.id);
            receivers.push(receiver);
        }

        // hookd runs, and the producers start sending.
        let base_url = format!("http://{listen}");
        let http = awc::Client::builder()
            .timeout(Duration::from_secs(5))
            .finish();
        let mut hookd = Hookd::start(&["serve"], &env, work.path(), "first-run");
        hookd
            .wait_healthy(&http, &base_url, Duration::from_secs(30))
            .await;
        let log = Rc::new(RefCell::new(IngestLog::default()));
        let mut lanes: Vec<Vec<Batch>> = (0..PRODUCERS).map(|_| Vec::new()).collect();
        for (i, batch) in batches(&partner.id, BATCHES, BATCH_SIZE)
            .into_iter()
            .enumerate()
        {
            lanes[i % PRODUCERS].push(batch);
        }
        let producers: Vec<_> = lanes
            .into_iter()
            .map(|lane| actix_rt::spawn(produce(base_url.clone(), key.clone(), lane, log.clone())))
            .collect();

        // Kill it while requests are on their way and deliveries are flowing;
        // if the chance comes, just after a batch committed and before its answer.
        let deadline = Instant::now() + Duration::from_secs(30);
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
                    "no ingest and delivery in flight within 30 s: {} events committed, receivers got {:?}; stderr:\n{}",
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
            actix_rt::time::sleep(Duration::from_millis(1)).await;
        }
        hookd.kill();
        let (committed_at_kill, in_flight_at_kill) = {
            let l = log.borrow();
            (l.committed.len(), l.in_flight.len())
        };
        let received_at_kill: Vec<usize> = receivers.iter().map(Receiver::count).collect();
        eprintln!(
            "killed hookd with {in_flight_at_kill} ingest request(s) in flight{}, after {committed_at_kill} acknowledged events; the receivers had {received_at_kill:?} requests",
            if kill_after_commit {
                " (one of them already committed, its answer not yet read)"
            } else {
                ""
            }
        );

        // The same configuration starts again, and the producers go on.
        let mut hookd = Hookd::start(&["serve"], &env, work.path(), "second-run");
        hookd
            .wait_healthy(&http, &base_url, Duration::from_secs(30))
            .await;
        for producer in producers {
            actix_rt::time::timeout(Duration::from_secs(60), producer)
                .await
                .expect("the producers should finish within 60 s of the restart")
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
        let all_arrived = harness::wait_until(Duration::from_secs(60), || async {
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
            for (receiver, endpoint) in receivers.iter().zip(&endpoints) {
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
                "committed events were lost: not every endpoint received every committed event within 60 s:{report}\nstderr of the second run:\n{}",
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
);

// ---------------------------------------------------------------------------------------------
// 2. A database that is not there at start

/// Runs `hookd <args>` with `url` as its database until it exits (at most 30 s):
/// its exit status and stderr.
fn run_against(url: &str, args: &[&str]) -> (ExitStatus, String) {
    let work = tempfile::tempdir().expect("a working folder for hookd");
    let env: Vec<(String, String)> = [
        ("HOOKD_DATABASE__URL", url),
        ("HOOKD_SECRETS__MASTER_KEY", MASTER_KEY),
        ("HOOKD_HTTP__LISTEN", "127.0.0.1:0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut hookd = Hookd::start(args, &env, work.path(), "hookd");
    let started = Instant::now();
    let status = hookd.wait_exit(Duration::from_secs(30)).unwrap_or_else(|| {
        panic!(
            "`hookd {}` with an unreachable database was still running after 30 s; stderr:\n{}",
            args.join(" "),
            hookd.stderr()
        )
    });
    eprintln!(
        "`hookd {}` exited ({status}) after {:?}",
        args.join(" "),
        started.elapsed()
    );
    (status, hookd.stderr())
}

mod a_database_that_is_down_at_start_is_a_clear_error {
    use super::*;

    #[test]
    fn postgres() {
        if harness::skip_postgres() {
            return;
        }
        let url = format!("postgres://postgres@127.0.0.1:{}/nope", free_port());
        let runs = ["serve", "migrate"].map(|command| {
            let url = url.clone();
            std::thread::spawn(move || (command, run_against(&url, &[command])))
        });
        for run in runs {
            let (command, (status, stderr)) = run.join().expect("the run does not panic");
            assert!(
                !status.success() && status.code().is_some(),
                "`hookd {command}` without its database should exit with an error code, got {status}; stderr:\n{stderr}"
            );
            assert!(
                stderr.contains("cannot connect to the database"),
                "`hookd {command}` should say it cannot connect to the database; stderr:\n{stderr}"
            );
        }
    }

    #[test]
    fn sqlite() {
        let url = "sqlite:///nonexistent-dir/x/hookd.db";
        for command in ["serve", "migrate"] {
            let (status, stderr) = run_against(url, &[command]);
            assert!(
                !status.success() && status.code().is_some(),
                "`hookd {command}` with an SQLite file it cannot create should exit with an error code, got {status}; stderr:\n{stderr}"
            );
            assert!(
                stderr.contains("database") && stderr.contains("/nonexistent-dir/x/hookd.db"),
                "`hookd {command}` should name the database it cannot open; stderr:\n{stderr}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 3. PostgreSQL goes away while hookd runs

/// The events' ids and a batch body for them.
fn event_batch(partner_id: &str, n: usize) -> (Vec<String>, Value) {
    let ids: Vec<String> = (0..n).map(|_| new_id("evt")).collect();
    let body = ids
        .iter()
        .map(|id| json!({"event_id": id, "type": "usage.finalized", "schema_version": 1, "partner_id": partner_id,
            "data": {"customer_id": "cus_204", "currency": "USD", "final_cost": "1.20"}}))
        .collect();
    (ids, body)
}

#[actix_rt::test]
async fn a_database_outage_while_running_loses_no_work() {
    use sea_orm::ConnectionTrait;

    if harness::skip_postgres() {
        return;
    }
    let app = harness::spawn_app(Backend::Postgres).await;
    let receiver = Receiver::start().await;
    let (endpoint, _) = app.endpoint(&receiver.url()).await;

    // Work flows.
    let (first, body) = event_batch(&app.partner_id, 2);
    let (status, answer) = app.post_events(&body).await;
    assert_eq!(status, 201, "the first events should be accepted: {answer}");
    for id in &first {
        app.wait_for_state(id, &endpoint, "delivered", Duration::from_secs(15))
            .await;
    }

    // Slow deliveries are in flight when the database goes away.
    receiver.set_default(Reply::Delay(
        Duration::from_millis(500),
        Box::new(Reply::status(200)),
    ));
    let (slow, body) = event_batch(&app.partner_id, 24);
    let (status, answer) = app.post_events(&body).await;
    assert_eq!(status, 201, "the slow batch should be accepted: {answer}");
    receiver
        .wait_for(first.len() + 1, Duration::from_secs(15))
        .await
        .expect("the slow deliveries should start");

    let url = app.running.shared.config.database.url.clone();
    let (server, name) = url
        .rsplit_once('/')
        .expect("a database URL with a database name");
    let admin = sea_orm::Database::connect(format!("{server}/postgres"))
        .await
        .expect("an admin connection to the cluster");
    let outage_start = Instant::now();
    admin
        .execute_unprepared(&format!(
            "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS false"
        ))
        .await
        .expect("the database can be closed to connections");
    admin
        .execute_unprepared(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        ))
        .await
        .expect("hookd's connections can be terminated");

    // While it is down, ingest says so at once, and so does readiness.
    let (_, body) = event_batch(&app.partner_id, 1);
    let asked = Instant::now();
    let (status, answer, content_type) = actix_rt::time::timeout(
        Duration::from_secs(15),
        app.post_events_with(Some(&app.service_key), &body.to_string()),
    )
    .await
    .expect("ingest should answer within 15 s while the database is down, not hang");
    assert!(
        asked.elapsed() < Duration::from_millis(2500),
        "ingest answered after {:?}, not within about 2 s",
        asked.elapsed()
    );
    assert_eq!(status, 503, "ingest without a database: {answer}");
    assert_eq!(
        answer["type"], "https://hookd.dev/problems/database-unavailable",
        "{answer}"
    );
    assert!(
        content_type.starts_with("application/problem+json"),
        "the outage answer should be problem+json, got `{content_type}`: {answer}"
    );
    let asked = Instant::now();
    let ready = app
        .http
        .get(format!("{}/readyz", app.base_url))
        .send()
        .await
        .expect("readyz answers during the outage");
    assert_eq!(ready.status().as_u16(), 503, "not ready without a database");
    assert!(ready.headers().contains_key("retry-after"));
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "readyz answered after {:?}, not within 1 s",
        asked.elapsed()
    );

    // About four seconds of outage, then the database comes back.
    actix_rt::time::sleep(Duration::from_secs(4).saturating_sub(outage_start.elapsed())).await;
    admin
        .execute_unprepared(&format!(
            "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS true"
        ))
        .await
        .expect("the database can be opened again");
    let outage_end = Instant::now();
    let answered_during_outage = receiver
        .received()
        .iter()
        .filter(|r| {
            let answered = r.at + Duration::from_millis(500);
            answered > outage_start && answered < outage_end
        })
        .count();
    assert!(
        answered_during_outage > 0,
        "the scenario needs attempts that finish while the database is down, but none did"
    );

    // Ingest works again.
    let ready = harness::wait_until(Duration::from_secs(20), || async {
        let res = app
            .http
            .get(format!("{}/readyz", app.base_url))
            .send()
            .await;
        matches!(res, Ok(r) if r.status().as_u16() == 200).then_some(())
    })
    .await;
    assert!(
        ready.is_some(),
        "hookd should be ready within 20 s of the database coming back"
    );
    let (after, body) = event_batch(&app.partner_id, 1);
    let (status, answer) = app.post_events(&body).await;
    assert_eq!(
        status, 201,
        "ingest should work again once the database is back: {answer}"
    );

    // Nothing was lost: every event is delivered, and recorded as such.
    let published: Vec<&String> = first.iter().chain(&slow).chain(&after).collect();
    for id in &published {
        app.wait_for_state(id, &endpoint, "delivered", Duration::from_secs(30))
            .await;
    }
    let got = received_ids(&receiver);
    let missing: Vec<&&String> = published
        .iter()
        .filter(|id| !got.contains_key(id.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "events recorded as delivered never reached the receiver: {missing:?}"
    );
    eprintln!(
        "{answered_during_outage} attempts finished during the outage; {} requests for {} events",
        receiver.count(),
        published.len()
    );
    harness::quiesce().await;
}
