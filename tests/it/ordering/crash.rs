//! The `hookd` binary under an ordered endpoint, killed or stopped and
//! started again on the same database. A SIGKILL mid-way leaves heads
//! leased and on the wire; once the lease passes, every subject goes on in
//! commit order (at least once: what the kill cut off between the answer
//! and its record comes again, before anything behind it). A subject held
//! by its dead head stays held across a restart until the head is replayed.

use std::{
    cell::RefCell,
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering::SeqCst},
    },
    time::Duration,
};

use hookd_test_macros::both_backends;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::{checker::OrderChecker, interleaved_places, ordered_endpoint_at, partner_event};
use crate::harness::{
    self, ApiAnswer, QUIET, SLOW, call_raw, expect_status,
    process::{Hookd, log_tail, post_events, prepare_endpoints, signal},
    serve::serve_env,
    stays_quiet, wait_until,
};

const SUBJECTS: usize = 24;
const PER_SUBJECT: usize = 8;
/// Each subject's events published before the kill; the rest follow the restart.
const BEFORE_KILL: usize = PER_SUBJECT / 2;

#[both_backends]
async fn a_killed_instance_leaves_no_subject_out_of_commit_order(backend: Backend) {
    let (url, _db_dir) = harness::database(backend).await;
    let store = prepare_endpoints(&url, &[], 1).await;
    // Every fourth subject's first event fails twice, and so does one
    // event in the middle of every fifth subject; the rest take 40 ms.
    let checker = OrderChecker::start(Duration::from_millis(40), |subject, seq| {
        match (subject % 4 == 0 && seq == 0) || (subject % 5 == 1 && seq == 2) {
            true => 2,
            false => 0,
        }
    })
    .await;
    let mut hookd = Instance::start(
        &url,
        &[
            // A kill leaves leased deliveries (and, on PostgreSQL, a leased
            // endpoint) behind: short leases let the next run take them soon.
            ("HOOKD_DELIVERY__LEASE", "2s"),
            ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "1s"),
            ("HOOKD_CLUSTER__LEASE_TTL", "3s"),
            // Failing heads retry soon, and do not open the circuit.
            (
                "HOOKD_DELIVERY__SCHEDULE",
                r#"["0s", "100ms", "100ms", "1h"]"#,
            ),
            ("HOOKD_DELIVERY__JITTER", "0"),
            ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1000"),
            ("HOOKD_LOG__FILTER", "warn"),
        ],
    )
    .await;
    let endpoint = hookd
        .ordered_endpoint(
            &store.partner_key,
            &checker.url(),
            json!({"concurrency": 6}),
        )
        .await;
    let before = interleaved_places(&store.partner_id, SUBJECTS, 0..BEFORE_KILL);
    hookd.publish(&store.service_key, &before).await;

    // Killed a quarter of the way through what it has, heads on the wire.
    let kill_at = before.len() / 4;
    let reached = wait_until(SLOW, || async {
        (checker.accepted() >= kill_at).then_some(())
    })
    .await;
    assert!(
        reached.is_some(),
        "{kill_at} events were not accepted within {SLOW:?}: {}\n{}",
        checker.accepted(),
        hookd.logs()
    );
    hookd.hookd.kill();
    let accepted_at_kill = checker.accepted();
    assert!(
        accepted_at_kill < before.len(),
        "every event was accepted before the kill: it cut nothing off"
    );
    let db = open(&url).await;
    let at_kill = states(&db, &endpoint).await;
    assert!(
        at_kill.get("delivering").is_some_and(|n| *n > 0),
        "the kill should leave deliveries leased: {at_kill:?}"
    );

    // The same configuration starts again, and the producer goes on.
    hookd.start_again().await;
    let after = interleaved_places(&store.partner_id, SUBJECTS, BEFORE_KILL..PER_SUBJECT);
    hookd.publish(&store.service_key, &after).await;
    let all = SUBJECTS * PER_SUBJECT;
    if let Err(e) = checker.wait_accepted(all, SLOW).await {
        panic!(
            "not every event was accepted after the restart: {e}\ndeliveries by state: {:?}\n{}",
            states(&db, &endpoint).await,
            hookd.logs()
        );
    }
    assert_eq!(
        checker.violations(),
        Vec::<String>::new(),
        "a subject went out of commit order across the kill"
    );
    let accepted = checker.first_accepts();
    assert_eq!(
        accepted.len(),
        SUBJECTS,
        "every subject arrived: {accepted:?}"
    );
    let places: Vec<u64> = (0..PER_SUBJECT as u64).collect();
    for (subject, first) in &accepted {
        assert_eq!(*first, places, "subject {subject}: its events, each once");
    }
    eprintln!(
        "{backend:?}: killed with {accepted_at_kill} of {} events accepted and deliveries {at_kill:?}; \
         all {all} arrived in order, {} accepted again",
        before.len(),
        checker.repeats()
    );
    db.close().await.expect("the test's connection closes");
}

#[both_backends]
async fn a_subject_held_by_its_dead_head_stays_held_across_a_restart(backend: Backend) {
    let (url, _db_dir) = harness::database(backend).await;
    let store = prepare_endpoints(&url, &[], 1).await;
    let key = store.partner_key.clone();
    // Subject 0's first event is refused until healed; one attempt each.
    let healed = Arc::new(AtomicBool::new(false));
    let heal = Arc::clone(&healed);
    let checker = OrderChecker::start(Duration::ZERO, move |subject, seq| {
        match subject == 0 && seq == 0 && !heal.load(SeqCst) {
            true => u32::MAX,
            false => 0,
        }
    })
    .await;
    let mut hookd = Instance::start(
        &url,
        &[
            ("HOOKD_DELIVERY__SCHEDULE", r#"["0s"]"#),
            ("HOOKD_DELIVERY__JITTER", "0"),
            ("HOOKD_CLUSTER__LEASE_TTL", "3s"),
            ("HOOKD_LOG__FILTER", "warn"),
        ],
    )
    .await;
    let endpoint = hookd
        .ordered_endpoint(&key, &checker.url(), json!({"ordering_on_dead": "hold"}))
        .await;
    let event = |subject, seq| partner_event(&store.partner_id, subject, seq);
    let events: Vec<Value> = (0..3)
        .flat_map(|seq| [event(0, seq), event(1, seq)])
        .collect();
    hookd.publish(&store.service_key, &events).await;
    checker
        .wait_accepted(3, SLOW)
        .await
        .expect("subject 1 is not held");
    let head = hookd.wait_held_by_dead_head(&endpoint, &key, 2).await;

    hookd.stop().await;
    hookd.start_again().await;
    // The restarted instance delivers (subject 1's new event arrives), and
    // subject 0's new event waits behind the same dead head.
    hookd
        .publish(&store.service_key, &[event(0, 3), event(1, 3)])
        .await;
    checker
        .wait_accepted(4, SLOW)
        .await
        .expect("the restarted instance delivers subject 1");
    let still = hookd.wait_held_by_dead_head(&endpoint, &key, 3).await;
    assert_eq!(still, head, "the same dead head holds subject 0");
    stays_quiet(QUIET, || async {
        let seen = checker.requests(0);
        (seen != [(0, false)]).then(|| format!("subject 0 moved: {seen:?}"))
    })
    .await;

    healed.store(true, SeqCst);
    let replay = format!("/v1/deliveries/{head}/replay");
    expect_status(&hookd.call("POST", &replay, &key, None).await, 202);
    checker
        .wait_accepted(8, SLOW)
        .await
        .expect("subject 0 follows its replayed head");
    assert_eq!(checker.violations(), Vec::<String>::new());
    assert_eq!(
        checker.requests(0),
        [(0, false), (0, true), (1, true), (2, true), (3, true)],
        "subject 0: its head refused once before the restart, replayed, then the rest in order"
    );
    let released = wait_until(SLOW, || async {
        let listed = hookd.held(&endpoint, &key).await;
        (listed["data"] == json!([])).then_some(())
    })
    .await;
    assert!(
        released.is_some(),
        "nothing is held once the head is delivered"
    );
    hookd.stop().await;
}

/// One `hookd serve` child on a database, started again with the same
/// configuration on the same address after a kill or a stop.
struct Instance {
    hookd: Hookd,
    env: Vec<(String, String)>,
    base_url: String,
    http: awc::Client,
    work: TempDir,
    runs: usize,
}

impl Instance {
    /// Starts `hookd serve` on the database at `url` with the test
    /// configuration and `extra` keys; returns once it is healthy.
    async fn start(url: &str, extra: &[(&str, &str)]) -> Instance {
        let (listen, env) = serve_env(url, extra);
        let work = tempfile::tempdir().expect("a working folder for hookd");
        let mut instance = Instance {
            hookd: Hookd::start(&["serve"], &env, work.path(), "run-1"),
            env,
            base_url: format!("http://{listen}"),
            http: client(),
            work,
            runs: 1,
        };
        let (http, base_url) = (instance.http.clone(), instance.base_url.clone());
        instance.hookd.wait_healthy(&http, &base_url, SLOW).await;
        instance
    }

    /// Starts the same configuration again, once the last run has ended.
    async fn start_again(&mut self) {
        self.runs += 1;
        let name = format!("run-{}", self.runs);
        self.hookd = Hookd::start(&["serve"], &self.env, self.work.path(), &name);
        self.hookd
            .wait_healthy(&self.http, &self.base_url, SLOW)
            .await;
    }

    /// SIGTERM: it drains and exits 0.
    async fn stop(&mut self) {
        // A fresh client: the old one's idle connections would hold the
        // server's graceful stop up for its 5 s shutdown timeout.
        self.http = client();
        signal(&self.hookd, "TERM");
        let status = self.hookd.exited(SLOW).await;
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "SIGTERM should end hookd with status 0 within {SLOW:?}\n{}",
            self.logs()
        );
    }

    async fn call(&self, method: &str, path: &str, key: &str, body: Option<&Value>) -> ApiAnswer {
        let text = body.map(Value::to_string);
        call_raw(
            &self.http,
            &self.base_url,
            method,
            path,
            key,
            text.as_deref(),
        )
        .await
    }

    /// Creates an ordered endpoint at `url` with the partner's `key`.
    async fn ordered_endpoint(&self, key: &str, url: &str, extra: Value) -> String {
        ordered_endpoint_at(&self.http, &self.base_url, key, url, extra).await
    }

    /// Publishes `events` with the service `key`, in requests of at most 10.
    async fn publish(&self, key: &str, events: &[Value]) {
        for chunk in events.chunks(10) {
            let body = Value::Array(chunk.to_vec()).to_string();
            let answer = post_events(&self.http, &self.base_url, key, &body).await;
            assert!(
                matches!(answer, Ok((201, _))),
                "ingest should take {} events: {answer:?}\n{}",
                chunk.len(),
                self.logs()
            );
        }
    }

    /// The endpoint's held subjects, as the Partner API lists them.
    async fn held(&self, endpoint: &str, key: &str) -> Value {
        let path = format!("/v1/endpoints/{endpoint}/held-subjects");
        expect_status(&self.call("GET", &path, key, None).await, 200)
    }

    /// Waits until the endpoint lists subject 0, and only it, as held by
    /// its dead head with `waiting` deliveries behind it; returns the
    /// head's delivery id.
    async fn wait_held_by_dead_head(&self, endpoint: &str, key: &str, waiting: i64) -> String {
        let last = RefCell::new(Value::Null);
        let head = wait_until(SLOW, || async {
            let listed = self.held(endpoint, key).await;
            let data = &listed["data"];
            let held = data.as_array().map(Vec::len) == Some(1)
                && data[0]["held_by"] == "dead_head"
                && data[0]["waiting"] == waiting;
            let head = data[0]["head"]["delivery_id"].as_str().map(String::from);
            *last.borrow_mut() = listed;
            head.filter(|_| held)
        })
        .await;
        let last = last.into_inner();
        let head = head.unwrap_or_else(|| {
            panic!("subject 0 should be held by its dead head with {waiting} waiting: {last}")
        });
        assert_eq!(
            last["data"][0]["subject"],
            json!({"type": "account", "id": "s0"}),
            "{last}"
        );
        head
    }

    /// The tail of each run's stderr, for assertion messages.
    fn logs(&self) -> String {
        (1..=self.runs)
            .map(|run| {
                let path = self.work.path().join(format!("run-{run}.stderr"));
                let log = std::fs::read_to_string(path).unwrap_or_default();
                format!("--- run {run} stderr:\n{}\n", log_tail(&log))
            })
            .collect()
    }
}

/// An HTTP client for the tests' requests to hookd.
fn client() -> awc::Client {
    awc::Client::builder()
        .timeout(Duration::from_secs(10))
        .finish()
}

/// The test's own connection to the database at `url`.
async fn open(url: &str) -> DatabaseConnection {
    let config = hookd::config::Config::load(None, harness::test_env(url, &[]))
        .expect("a valid configuration");
    hookd::store::connect(&config.database)
        .await
        .expect("the database opens")
}

/// The endpoint's deliveries, counted by state.
async fn states(db: &DatabaseConnection, endpoint: &str) -> BTreeMap<String, i64> {
    let sql = format!(
        "SELECT state, count(*) AS n FROM delivery WHERE endpoint_id = '{endpoint}' GROUP BY state"
    );
    let rows = db
        .query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .expect("the count runs");
    rows.iter()
        .map(|r| {
            let state: String = r.try_get("", "state").expect("a state");
            let n: i64 = r.try_get("", "n").expect("a count");
            (state, n)
        })
        .collect()
}
