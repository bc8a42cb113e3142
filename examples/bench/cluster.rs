//! `--instances N`: N real `hookd serve` processes (the release binary) on one
//! PostgreSQL database. For 1, 2, … N instances in turn, on a fresh database:
//! publish events spread over the instances, and time them into a receiver
//! that counts the requests in flight per endpoint. Then, with N ≥ 2, SIGKILL
//! the instance that holds the most endpoints while a trickle of events
//! flows, and time how long its endpoints go without a delivery.

use std::collections::HashMap;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{HttpRequest, HttpResponse, web};
use anyhow::Context as _;
use sea_orm::{ConnectionTrait, Statement};

use crate::setup;

pub struct Plan {
    pub instances: usize,
    pub endpoints: usize,
    pub concurrency: u32,
    pub events: usize,
    pub batch: usize,
    pub delay: Duration,
    pub lease_ttl: Duration,
}

/// Runs the whole series; prints one line per instance count and the failover.
pub async fn run(plan: Plan) -> anyhow::Result<bool> {
    let binary = crate::process::build_binary()?;
    let receiver = Receiver::start(plan.delay)?;
    let conditions = format!(
        "{} endpoints with concurrency {}, receiver answers after {} ms; {} events of {} per POST; \
         cluster.lease_ttl {} s; PostgreSQL private cluster (fsync off)",
        plan.endpoints,
        plan.concurrency,
        plan.delay.as_millis(),
        plan.events,
        plan.batch,
        plan.lease_ttl.as_secs(),
    );
    println!("{}", crate::report::header());
    let mut ok = true;
    for n in 1..=plan.instances {
        let fleet = Fleet::start(&binary, &plan, n, &receiver).await?;
        receiver.reset();
        let expected = plan.events * plan.endpoints;
        let started = Instant::now();
        fleet.ingest.publish(plan.events, plan.batch).await?;
        let arrived = receiver.wait_for(expected, Duration::from_secs(120)).await;
        let took = receiver
            .last_at()
            .map_or(started.elapsed(), |t| t - started);
        let max = receiver.max_in_flight();
        let within = max <= plan.concurrency as usize;
        ok &= within && arrived == expected;
        let figures = format!(
            "{expected} deliveries in {:.2} s = {:.0}/s; largest in flight per endpoint {max} \
             (cap {}){}; {} duplicate receipts",
            took.as_secs_f64(),
            arrived as f64 / took.as_secs_f64(),
            plan.concurrency,
            if within { "" } else { " EXCEEDED" },
            receiver.duplicates(),
        );
        crate::report::row(
            &format!("cluster, {n} instance(s)"),
            "postgres",
            &figures,
            &conditions,
        );
        if arrived != expected {
            println!("FAIL: {arrived} of {expected} deliveries arrived");
        }
        if n == plan.instances && n >= 2 {
            ok &= fleet.failover(&receiver, &plan, &conditions).await?;
        }
        fleet.stop();
    }
    Ok(ok)
}

struct Fleet {
    children: Vec<Child>,
    ingest: Ingest,
    db: sea_orm::DatabaseConnection,
    _logs: tempfile::TempDir,
}

/// Where and as whom events are published.
#[derive(Clone)]
struct Ingest {
    addrs: Vec<String>,
    key: String,
    partner: String,
}

impl Fleet {
    async fn start(
        binary: &std::path::Path,
        plan: &Plan,
        n: usize,
        receiver: &Receiver,
    ) -> anyhow::Result<Fleet> {
        let url = super::pg::fresh_database()
            .await
            .map_err(|e| anyhow::anyhow!("the private PostgreSQL cluster: {e}"))?;
        let ttl = format!("{}s", plan.lease_ttl.as_secs());
        let extra = [
            ("HOOKD_CLUSTER__LEASE_TTL", ttl.as_str()),
            ("HOOKD_LOG__FILTER", "warn"),
        ];
        let env = |listen: &str| setup::env(&url, listen, &extra);
        // The schema and the rows first, from this process.
        let db = setup::migrated(env("127.0.0.1:0")).await?;
        let urls: Vec<String> = (0..plan.endpoints)
            .map(|i| format!("http://127.0.0.1:{}/hooks/{i}", receiver.port))
            .collect();
        let made = setup::populate(&db, 1, &urls, plan.concurrency).await?;
        let (key, partner) = (made.key, made.partners[0].clone());
        let logs = tempfile::tempdir()?;
        let mut children = Vec::new();
        let mut addrs = Vec::new();
        for i in 0..n {
            let listen = format!("127.0.0.1:{}", crate::process::free_port()?);
            let log = logs.path().join(format!("hookd-{i}.log"));
            let child = crate::process::serve(binary, env(&listen), &log)?;
            children.push(child);
            addrs.push(format!("http://{listen}"));
        }
        let fleet = Fleet {
            children,
            ingest: Ingest {
                addrs,
                key,
                partner,
            },
            db,
            _logs: logs,
        };
        fleet.wait_leased(plan.endpoints, n).await?;
        Ok(fleet)
    }

    async fn count(&self, sql: &str) -> anyhow::Result<i64> {
        setup::count(&self.db, sql).await
    }

    /// Until every endpoint is leased and every instance holds some.
    async fn wait_leased(&self, endpoints: usize, n: usize) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let leased = self
                .count("SELECT COUNT(*) AS n FROM endpoint WHERE lease_owner IS NOT NULL")
                .await
                .unwrap_or(0);
            let owners = self
                .count("SELECT COUNT(DISTINCT lease_owner) AS n FROM endpoint")
                .await
                .unwrap_or(0);
            if leased as usize == endpoints && owners as usize == n.min(endpoints) {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "the endpoints were not spread over {n} instances within 60 s"
            );
            actix_rt::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILLs the instance holding the most endpoints while an event every
    /// 100 ms flows to every endpoint; reports how long the victim's
    /// endpoints went without a delivery.
    async fn failover(
        &self,
        receiver: &Receiver,
        plan: &Plan,
        conditions: &str,
    ) -> anyhow::Result<bool> {
        let owners: Vec<(String, String)> = self
            .db
            .query_all_raw(Statement::from_string(
                self.db.get_database_backend(),
                "SELECT e.url, i.pid FROM endpoint e JOIN instance i ON i.id = e.lease_owner",
            ))
            .await?
            .iter()
            .map(|r| {
                Ok((
                    r.try_get::<String>("", "url")?,
                    r.try_get::<i64>("", "pid")?.to_string(),
                ))
            })
            .collect::<Result<_, sea_orm::DbErr>>()?;
        let mut held: HashMap<String, Vec<String>> = HashMap::new();
        for (url, pid) in owners {
            let path = url
                .split_once("/hooks/")
                .map(|(_, i)| format!("/hooks/{i}"))
                .unwrap_or_default();
            held.entry(pid).or_default().push(path);
        }
        let (victim_pid, paths) = held
            .into_iter()
            .max_by_key(|(_, p)| p.len())
            .context("no leases")?;
        let victim = self
            .children
            .iter()
            .position(|c| c.id().to_string() == victim_pid)
            .context("the victim")?;
        let mut survivors = self.ingest.clone();
        survivors.addrs.remove(victim);
        // A trickle: one event every 100 ms through a surviving instance.
        let trickle = async {
            for _ in 0..((plan.lease_ttl.as_secs() + 10) * 10) {
                let _ = survivors.publish(1, 1).await;
                actix_rt::time::sleep(Duration::from_millis(100)).await;
            }
        };
        let kill = async {
            actix_rt::time::sleep(Duration::from_secs(2)).await;
            let killed_at = Instant::now();
            let _ = Command::new("kill").args(["-KILL", &victim_pid]).status();
            killed_at
        };
        let (_, killed_at) = futures_util::join!(trickle, kill);
        let resumed = receiver.first_after(&paths, killed_at);
        let gap = resumed.map(|t| t - killed_at);
        match gap {
            Some(gap) => crate::report::row(
                "cluster, failover",
                "postgres",
                &format!(
                    "SIGKILL of the instance holding {} endpoints: they received again after {:.1} s \
                     (a lease lapses cluster.lease_ttl = {} s after the last heartbeat; a survivor \
                     takes it at its next heartbeat)",
                    paths.len(),
                    gap.as_secs_f64(),
                    plan.lease_ttl.as_secs()
                ),
                conditions,
            ),
            None => println!(
                "FAIL failover: the killed instance's {} endpoints received nothing afterwards",
                paths.len()
            ),
        }
        Ok(gap.is_some())
    }

    fn stop(mut self) {
        for child in &mut self.children {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
        }
        for child in &mut self.children {
            let _ = child.wait();
        }
    }
}

impl Ingest {
    /// Publishes `events` events, `batch` per POST, POSTs spread round-robin
    /// over the instances, four at a time.
    async fn publish(&self, events: usize, batch: usize) -> anyhow::Result<()> {
        use futures_util::StreamExt as _;
        let client = awc::Client::builder()
            .timeout(Duration::from_secs(60))
            .finish();
        let posts = (0..events.div_ceil(batch)).map(|i| {
            let n = batch.min(events - i * batch);
            let body: Vec<serde_json::Value> = (0..n)
                .map(|_| {
                    serde_json::json!({"type": "usage.finalized", "partner_id": self.partner,
                    "data": {"customer_id": "cus_204", "final_cost": "1.20", "currency": "USD"}})
                })
                .collect();
            let url = format!("{}/v1/events", self.addrs[i % self.addrs.len()]);
            let client = client.clone();
            let key = self.key.clone();
            async move {
                let res = client
                    .post(url)
                    .insert_header(("authorization", format!("Bearer {key}")))
                    .send_json(&body)
                    .await
                    .map_err(|e| anyhow::anyhow!("POST /v1/events: {e}"))?;
                anyhow::ensure!(
                    res.status() == 201,
                    "POST /v1/events answered {}",
                    res.status()
                );
                Ok(())
            }
        });
        let results: Vec<anyhow::Result<()>> = futures_util::stream::iter(posts)
            .buffer_unordered(4)
            .collect()
            .await;
        results.into_iter().collect()
    }
}

// ---------------------------------------------------------------------------------------------
// The receiver: actix-web on a thread of its own; endpoints are paths.

#[derive(Default)]
struct Tally {
    in_flight: HashMap<String, usize>,
    max_in_flight: usize,
    seen: HashMap<(String, String), usize>,
    /// (path, when read) of every request.
    receipts: Vec<(String, Instant)>,
}

struct Receiver {
    port: u16,
    tally: Arc<Mutex<Tally>>,
}

impl Receiver {
    fn start(delay: Duration) -> anyhow::Result<Receiver> {
        let tally = Arc::new(Mutex::new(Tally::default()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let shared = tally.clone();
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let data = web::Data::new((shared, delay));
                let server = actix_web::HttpServer::new(move || {
                    actix_web::App::new()
                        .app_data(data.clone())
                        .default_service(web::to(receive))
                })
                .listen(listener)
                .expect("the receiver listens")
                .run();
                let _ = server.await;
            })
        });
        Ok(Receiver { port, tally })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn reset(&self) {
        *self.lock() = Tally::default();
    }

    fn max_in_flight(&self) -> usize {
        self.lock().max_in_flight
    }

    fn duplicates(&self) -> usize {
        self.lock().seen.values().filter(|n| **n > 1).count()
    }

    fn last_at(&self) -> Option<Instant> {
        self.lock().receipts.last().map(|(_, t)| *t)
    }

    fn first_after(&self, paths: &[String], after: Instant) -> Option<Instant> {
        self.lock()
            .receipts
            .iter()
            .filter(|(p, t)| *t > after && paths.contains(p))
            .map(|(_, t)| *t)
            .min()
    }

    /// Waits until `n` distinct deliveries arrived, or 10 s pass without one.
    async fn wait_for(&self, n: usize, limit: Duration) -> usize {
        let deadline = Instant::now() + limit;
        let (mut last, mut since) = (0, Instant::now());
        loop {
            let got = self.lock().seen.len();
            if got >= n || Instant::now() > deadline || since.elapsed() > Duration::from_secs(10) {
                return got;
            }
            if got != last {
                (last, since) = (got, Instant::now());
            }
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn receive(req: HttpRequest, data: web::Data<(Arc<Mutex<Tally>>, Duration)>) -> HttpResponse {
    let (tally, delay) = (&data.0, data.1);
    let path = req.path().to_string();
    let id = req
        .headers()
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    {
        let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
        let now = t.in_flight.entry(path.clone()).or_default();
        *now += 1;
        let now = *now;
        t.max_in_flight = t.max_in_flight.max(now);
    }
    if !delay.is_zero() {
        actix_rt::time::sleep(delay).await;
    }
    let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = t.in_flight.get_mut(&path) {
        *n -= 1;
    }
    *t.seen.entry((path.clone(), id)).or_default() += 1;
    t.receipts.push((path, Instant::now()));
    HttpResponse::Ok().finish()
}
