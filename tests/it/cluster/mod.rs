//! Several `hookd serve` on one PostgreSQL database share its endpoints: each
//! endpoint is leased to one live instance, so its concurrency cap holds
//! across the cluster, and an instance that is stopped, killed, paused or cut
//! off from the database loses no event and sends nothing it no longer owns.
//!
//! Each test runs real `hookd` processes (PostgreSQL only; a 3 s lease TTL)
//! against one receiver with an endpoint per path (`/hooks/0`, `/hooks/1`, …)
//! that answers 200 after 200 ms, and counts what reaches it: per path, the
//! requests in flight and the deliveries of each event.

mod changes;
mod database_failover;
mod failover;
mod fencing;
mod handover;
mod keys;
mod leases;
mod outage;
mod producer;
mod roles;
mod rolling;
mod sessions;
mod spread;

pub use leases::{Lease, LeaseReader, busiest};
pub use producer::Producer;

use std::{
    cell::RefCell,
    collections::{BTreeMap, HashMap},
    rc::Rc,
    time::{Duration, Instant},
};

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, QueryResult, Statement};

use crate::harness::{
    self, SLOW, WAIT,
    process::{
        Hookd, Prepared, event_batch, free_port, log_tail as tail, post_events, prepare_endpoints,
        signal,
    },
    receiver::{Receiver, Reply},
    wait_until,
};

/// `cluster.lease_ttl` of every instance: short, so that failover is quick.
const LEASE_TTL: Duration = Duration::from_secs(3);
/// Each endpoint's `concurrency`.
const CONCURRENCY: usize = 2;
/// How long the receiver takes to answer 200.
const REPLY_DELAY: Duration = Duration::from_millis(200);
/// Events per request when a test publishes.
const BATCH: usize = 10;

/// One `hookd serve` of the fleet.
pub struct Node {
    pub hookd: Hookd,
    pub base_url: String,
    pub name: String,
}

/// Instances of `hookd serve` on one database, a receiver with an endpoint
/// per path, and the base URLs that producers post to.
pub struct Fleet {
    pub receiver: Receiver,
    pub store: Prepared,
    pub nodes: Vec<Node>,
    /// The nodes that take ingest: a stopped, killed or paused node leaves it.
    pub targets: Rc<RefCell<Vec<String>>>,
    pub http: awc::Client,
    db: DatabaseConnection,
    url: String,
    work: tempfile::TempDir,
    /// `cluster.lease_ttl` of the instances this fleet starts.
    pub lease_ttl: Duration,
}

impl Fleet {
    /// `instances` instances on the database at `url`, sharing `endpoints`
    /// endpoints of concurrency 2 at `/hooks/0`, `/hooks/1`, …
    pub async fn start(url: &str, instances: usize, endpoints: usize) -> Fleet {
        Fleet::start_with_ttl(url, instances, endpoints, LEASE_TTL).await
    }

    /// Like `start`, with this `cluster.lease_ttl`.
    pub async fn start_with_ttl(
        url: &str,
        instances: usize,
        endpoints: usize,
        lease_ttl: Duration,
    ) -> Fleet {
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::Delay(REPLY_DELAY, Box::new(Reply::status(200))));
        let urls: Vec<String> = (0..endpoints)
            .map(|i| format!("{}/hooks/{i}", receiver.url()))
            .collect();
        let store = prepare_endpoints(url, &urls, CONCURRENCY as u32).await;
        let config = hookd::config::Config::load(None, harness::test_env(url, &[]))
            .expect("a valid configuration");
        let db = hookd::store::connect(&config.database)
            .await
            .expect("the test's own connection to the database");
        let mut fleet = Fleet {
            receiver,
            store,
            nodes: Vec::new(),
            targets: Rc::default(),
            http: awc::Client::builder()
                .timeout(Duration::from_secs(10))
                .finish(),
            db,
            url: url.to_string(),
            work: tempfile::tempdir().expect("a working folder"),
            lease_ttl,
        };
        for _ in 0..instances {
            fleet.add().await;
        }
        fleet
    }

    /// `instances` instances on a fresh database of the private PostgreSQL
    /// cluster, sharing `endpoints` endpoints (see `start`), each
    /// registered: the fleet and the instance ids (see `wait_registered`).
    /// None when the PostgreSQL variants are skipped.
    pub async fn registered(
        instances: usize,
        endpoints: usize,
    ) -> Option<(Fleet, Vec<Option<String>>)> {
        Fleet::registered_with_ttl(instances, endpoints, LEASE_TTL).await
    }

    /// Like `registered`, with this `cluster.lease_ttl`.
    pub async fn registered_with_ttl(
        instances: usize,
        endpoints: usize,
        lease_ttl: Duration,
    ) -> Option<(Fleet, Vec<Option<String>>)> {
        if harness::skip_postgres() {
            return None;
        }
        let url = harness::pg::fresh_database().await.expect("a database");
        let fleet = Fleet::start_with_ttl(&url, instances, endpoints, lease_ttl).await;
        let ids = fleet.wait_registered().await;
        Some((fleet, ids))
    }

    /// Like `registered`, with a producer posting one event every `every`
    /// and the deliveries flowing: the fleet, the instance ids and the
    /// producer.
    pub async fn flowing(
        instances: usize,
        endpoints: usize,
        every: Duration,
    ) -> Option<(Fleet, Vec<Option<String>>, Producer)> {
        let (fleet, ids) = Fleet::registered(instances, endpoints).await?;
        let producer = Producer::start(&fleet, 1, every);
        fleet.wait_flowing().await;
        Some((fleet, ids, producer))
    }

    /// The leases held now by the instance `instance_id`.
    pub async fn leases_of(&self, instance_id: &str) -> Vec<Lease> {
        let mut leases = self.leases().await;
        leases.retain(|l| l.owner.as_deref() == Some(instance_id));
        leases
    }

    /// Starts one more instance, waits until it is healthy and gives it
    /// ingest; returns its index.
    pub async fn add(&mut self) -> usize {
        self.add_as("all").await
    }

    /// Like `add`, in this `cluster.role`; a `delivery` node takes no ingest.
    pub async fn add_as(&mut self, role: &str) -> usize {
        let i = self.nodes.len();
        let listen = format!("127.0.0.1:{}", free_port());
        let ttl = format!("{}ms", self.lease_ttl.as_millis());
        let env = harness::test_env(
            &self.url,
            &[
                ("HOOKD_HTTP__LISTEN", &listen),
                ("HOOKD_CLUSTER__LEASE_TTL", &ttl),
                ("HOOKD_LOG__FILTER", "warn,hookd::cluster=info"),
                ("HOOKD_CLUSTER__ROLE", role),
            ],
        );
        let name = format!("node-{i}");
        let mut hookd = Hookd::start(&["serve"], &env, self.work.path(), &name);
        let base_url = format!("http://{listen}");
        hookd.wait_healthy(&self.http, &base_url, SLOW).await;
        if role != "delivery" {
            self.targets.borrow_mut().push(base_url.clone());
        }
        self.nodes.push(Node {
            hookd,
            base_url,
            name,
        });
        i
    }

    /// Takes node `i` out of ingest.
    pub fn retire(&self, i: usize) {
        let url = &self.nodes[i].base_url;
        self.targets.borrow_mut().retain(|t| t != url);
    }

    /// SIGTERMs node `i` (out of ingest first) and checks it drains and exits
    /// 0 within 20 s without a panic; returns how long it took.
    pub async fn terminate(&mut self, i: usize) -> Duration {
        self.retire(i);
        let node = &mut self.nodes[i];
        let asked = Instant::now();
        signal(&node.hookd, "TERM");
        let status = node.hookd.exited(Duration::from_secs(20)).await;
        let log = node.hookd.stderr();
        let status = status.unwrap_or_else(|| {
            panic!(
                "{}: no exit within 20 s of SIGTERM:\n{}",
                node.name,
                tail(&log)
            )
        });
        assert!(
            !log.contains("panicked"),
            "{} panicked while stopping:\n{}",
            node.name,
            tail(&log)
        );
        assert_eq!(
            status.code(),
            Some(0),
            "{}: SIGTERM should end it with status 0, got {status}:\n{}",
            node.name,
            tail(&log)
        );
        asked.elapsed()
    }

    /// The path of the endpoint with this id.
    pub fn path_of(&self, endpoint_id: &str) -> String {
        let i = self
            .store
            .endpoint_ids
            .iter()
            .position(|e| e == endpoint_id);
        format!("/hooks/{}", i.expect("an endpoint of this fleet"))
    }

    /// Rows of a raw SQL query on the fleet's database.
    pub async fn query(&self, sql: &str) -> Vec<QueryResult> {
        self.db
            .query_all_raw(Statement::from_string(DbBackend::Postgres, sql))
            .await
            .unwrap_or_else(|e| panic!("the query `{sql}` runs: {e}"))
    }

    /// Every endpoint's lease, as the database has it now.
    pub async fn leases(&self) -> Vec<Lease> {
        let leases = self.lease_reader().read().await;
        leases.expect("the leases can be read")
    }

    /// Reads the leases, for a task of its own.
    pub fn lease_reader(&self) -> LeaseReader {
        LeaseReader {
            db: self.db.clone(),
            endpoint_ids: self.store.endpoint_ids.clone(),
        }
    }

    /// The registered instances: pid → instance id.
    pub async fn instances(&self) -> HashMap<u32, String> {
        let rows = self.query("SELECT id, pid FROM instance").await;
        rows.iter()
            .map(|r| {
                let pid: i64 = r.try_get("", "pid").expect("a pid");
                let id: String = r.try_get("", "id").expect("an id");
                (pid as u32, id)
            })
            .collect()
    }

    /// Waits (at most `WAIT`) until every node still taking ingest is
    /// registered; returns each node's instance id (None for the others).
    pub async fn wait_registered(&self) -> Vec<Option<String>> {
        let ids = wait_until(WAIT, || async {
            let registered = self.instances().await;
            let targets = self.targets.borrow().clone();
            let ids: Vec<Option<String>> = self
                .nodes
                .iter()
                .map(|n| registered.get(&n.hookd.pid()).cloned())
                .collect();
            let all = self
                .nodes
                .iter()
                .zip(&ids)
                .all(|(n, id)| id.is_some() || !targets.contains(&n.base_url));
            all.then_some(ids)
        })
        .await;
        ids.unwrap_or_else(|| {
            panic!(
                "not every instance registered in `instance` within {WAIT:?}:\n{}",
                self.logs()
            )
        })
    }

    /// Waits (at most `SLOW`) until the leases settle: every endpoint leased
    /// to a registered instance, and each of those owning some, or (should
    /// the hash leave one out) no lease changing for 3 s. Returns them.
    pub async fn wait_settled(&self) -> Vec<Lease> {
        let deadline = Instant::now() + SLOW;
        let mut last: Option<(Vec<Lease>, Instant)> = None;
        loop {
            let live: Vec<String> = self.instances().await.into_values().collect();
            let leases = self.leases().await;
            let leased = leases
                .iter()
                .all(|l| l.owner.as_ref().is_some_and(|o| live.contains(o)));
            let shared = live
                .iter()
                .all(|id| leases.iter().any(|l| l.owner.as_ref() == Some(id)));
            let since = match last {
                Some((before, since)) if before == leases => since,
                _ => Instant::now(),
            };
            if leased && (shared || since.elapsed() >= Duration::from_secs(3)) {
                return leases;
            }
            assert!(
                Instant::now() < deadline,
                "the leases did not settle within {SLOW:?} (instances {live:?}): {leases:?}\n{}",
                self.logs()
            );
            last = Some((leases, since));
            actix_rt::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits (at most `SLOW`) until every path has had a delivery.
    pub async fn wait_flowing(&self) {
        let paths = self.store.endpoint_ids.len();
        let flowing = wait_until(SLOW, || async {
            (self.receiver.peak_in_flight().len() == paths).then_some(())
        })
        .await;
        assert!(
            flowing.is_some(),
            "deliveries did not reach every path within {SLOW:?}: {:?}\n{}",
            self.receiver.peak_in_flight(),
            self.logs()
        );
    }

    /// Publishes `n` events through node `i`, in batches of `BATCH` (small
    /// enough for the fast path: the publishing node sends what it owns at
    /// once, under the lease it believes it holds); returns their ids.
    pub async fn publish(&self, i: usize, n: usize) -> Vec<String> {
        let mut all = Vec::new();
        for size in (0..n).step_by(BATCH).map(|start| (n - start).min(BATCH)) {
            let (ids, body) = event_batch(&self.store.partner_id, size);
            let base_url = &self.nodes[i].base_url;
            let answer = post_events(&self.http, base_url, &self.store.service_key, &body).await;
            if !matches!(answer, Ok((201, _))) {
                panic!(
                    "{} should accept {size} events: {answer:?}\nthe database's sessions:\n{}\n{}",
                    self.nodes[i].name,
                    self.sessions().await,
                    self.logs()
                );
            }
            all.extend(ids);
        }
        all
    }

    /// Waits (at most `timeout`) until every event has reached every path;
    /// panics with what is missing and what the database says about it.
    pub async fn wait_delivered(&self, events: &[String], timeout: Duration) {
        let expected = events.len() * self.store.endpoint_ids.len();
        let done = wait_until(timeout, || async {
            (self.receiver.distinct_deliveries() >= expected && self.missing(events).is_empty())
                .then_some(())
        })
        .await;
        if done.is_some() {
            return;
        }
        let missing = self.missing(events);
        let mut report = format!(
            "{} of {expected} deliveries ({} events x {} endpoints) did not arrive within {timeout:?}",
            missing.len(),
            events.len(),
            self.store.endpoint_ids.len()
        );
        for (endpoint_id, event_id) in missing.iter().take(8) {
            let rows = self
                .query(&format!(
                    "SELECT d.state, d.attempt_count, e.lease_owner FROM delivery d \
                     JOIN endpoint e ON e.id = d.endpoint_id \
                     WHERE d.event_id = '{event_id}' AND d.endpoint_id = '{endpoint_id}'"
                ))
                .await;
            let row = rows.first().map(|r| {
                (
                    r.try_get::<String>("", "state").unwrap_or_default(),
                    r.try_get::<i32>("", "attempt_count").unwrap_or(-1),
                    r.try_get::<Option<String>>("", "lease_owner")
                        .ok()
                        .flatten(),
                )
            });
            let path = self.path_of(endpoint_id);
            report.push_str(&format!(
                "\n  {event_id} to {path}: (state, attempts, lease owner) {row:?}"
            ));
        }
        panic!("lost deliveries: {report}\n{}", self.logs());
    }

    /// The (endpoint id, event id) pairs that have not reached the receiver.
    pub fn missing(&self, events: &[String]) -> Vec<(String, String)> {
        let got = self.receiver.deliveries();
        let mut missing = Vec::new();
        for endpoint_id in &self.store.endpoint_ids {
            let path = self.path_of(endpoint_id);
            for event_id in events {
                if !got.contains_key(&(path.clone(), event_id.clone())) {
                    missing.push((endpoint_id.clone(), event_id.clone()));
                }
            }
        }
        missing
    }

    /// The (path, event id) pairs that reached the receiver more than once.
    pub fn duplicates(&self) -> BTreeMap<(String, String), usize> {
        let got = self.receiver.deliveries();
        got.into_iter().filter(|(_, n)| *n > 1).collect()
    }

    /// Checks that no path ever had more than `CONCURRENCY` requests in flight.
    pub fn assert_cap_held(&self) {
        let peak = self.receiver.max_in_flight_per_path();
        assert!(
            peak <= CONCURRENCY,
            "an endpoint had {peak} requests in flight at once, over its concurrency of \
             {CONCURRENCY}; the most per path: {:?}",
            self.receiver.peak_in_flight()
        );
    }

    /// Attempts stored twice: (delivery id, attempt number, count).
    pub async fn attempts_recorded_twice(&self) -> Vec<(String, i32, i64)> {
        let rows = self
            .query(
                "SELECT delivery_id, attempt_no, count(*) AS n FROM attempt \
                 GROUP BY 1, 2 HAVING count(*) > 1",
            )
            .await;
        rows.iter()
            .map(|r| {
                (
                    r.try_get("", "delivery_id").unwrap_or_default(),
                    r.try_get("", "attempt_no").unwrap_or(-1),
                    r.try_get("", "n").unwrap_or(-1),
                )
            })
            .collect()
    }

    /// The tail of every node's stderr, for assertion messages.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for node in &self.nodes {
            let log = node.hookd.stderr();
            out.push_str(&format!("--- {} stderr:\n{}\n", node.name, tail(&log)));
        }
        out
    }

    /// Panics if any node's stderr shows a panic.
    pub fn assert_no_panic(&self) {
        for node in &self.nodes {
            let log = node.hookd.stderr();
            assert!(
                !log.contains("panicked"),
                "{} panicked:\n{}",
                node.name,
                tail(&log)
            );
        }
    }
}
