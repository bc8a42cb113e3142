//! End-to-end benchmark: events through `POST /v1/events` into a local receiver.
//!
//! ```text
//! cargo run --release --example bench -- [--backend sqlite|postgres|both]
//!     [--scenario throughput|steady|both] [--events 20000] [--endpoints 10]
//!     [--batch 500] [--concurrency 4] [--rate 500] [--seconds 10] [--keep-db]
//! cargo run --release --example bench -- --backend postgres --instances 3
//!     [--events 20000] [--endpoints 20] [--cap 2] [--delay-ms 0] [--lease-ttl 15]
//! ```
//!
//! With `--instances N` it runs N real `hookd serve` processes on one
//! PostgreSQL database instead (see `cluster.rs`).
//!
//! Each scenario starts hookd in this process (`hookd::app::start`) on a fresh
//! database, with the default configuration except what loopback delivery
//! needs; `HOOKD_*` variables in the environment override keys as for `hookd
//! serve`. The receiver (actix-web, one port per endpoint, answers 200 at once)
//! and the producer (awc) run on threads of their own, so the engine keeps its
//! thread. Latency runs from just before the ingest POST is sent to the moment
//! the receiver has read the whole delivery. PostgreSQL is the tests' private
//! cluster (fsync off; see tests/it/harness/pg/).

#![allow(
    clippy::disallowed_methods,
    reason = "an example runs outside hookd: its own HTTP client and wall clock"
)]

#[path = "../../tests/it/harness/pg/mod.rs"]
#[allow(dead_code)]
mod pg;

mod cluster;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{HttpRequest, HttpResponse, web};
use anyhow::Context as _;
use clap::Parser;
use futures_util::StreamExt as _;
use hookd::store::{self, endpoints::EndpointStatus, endpoints::NewEndpoint, keys::Role};

#[derive(Parser, Debug)]
#[command(about = "Drive events through hookd into a local receiver and measure it")]
#[command(args_override_self = true)]
struct Args {
    #[arg(long, default_value = "both", value_parser = ["sqlite", "postgres", "both"])]
    backend: String,
    #[arg(long, default_value = "both", value_parser = ["throughput", "steady", "both"])]
    scenario: String,
    /// Throughput: events to publish, each to every endpoint.
    #[arg(long, default_value_t = 20_000)]
    events: usize,
    /// Throughput: endpoints, each on its own receiver port.
    #[arg(long, default_value_t = 10)]
    endpoints: usize,
    /// Throughput: events per POST.
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// Throughput: POSTs in flight at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Steady: events per second (one event per POST) to one endpoint.
    #[arg(long, default_value_t = 500)]
    rate: u32,
    /// Steady: seconds to publish for.
    #[arg(long, default_value_t = 10)]
    seconds: u32,
    /// Keep the SQLite file and print where it is.
    #[arg(long)]
    keep_db: bool,
    /// Give up when no delivery arrives for this many seconds.
    #[arg(long, default_value_t = 60)]
    stall_secs: u64,
    /// Cluster: run 1 to N real `hookd serve` processes on one PostgreSQL.
    #[arg(long)]
    instances: Option<usize>,
    /// Cluster: each endpoint's concurrency cap.
    #[arg(long, default_value_t = 2)]
    cap: u32,
    /// Cluster: how long the receiver takes to answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Cluster: cluster.lease_ttl in seconds.
    #[arg(long, default_value_t = 15)]
    lease_ttl: u64,
}

fn main() {
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let args = Args::parse();
    if let Some(instances) = args.instances {
        let plan = cluster::Plan {
            instances,
            endpoints: if args.endpoints == 10 {
                20
            } else {
                args.endpoints
            },
            concurrency: args.cap,
            events: args.events,
            batch: args.batch,
            delay: Duration::from_millis(args.delay_ms),
            lease_ttl: Duration::from_secs(args.lease_ttl),
        };
        let ok = actix_rt::System::new()
            .block_on(cluster::run(plan))
            .unwrap_or_else(|e| {
                println!("FAIL cluster: {e:#}");
                false
            });
        std::process::exit(if ok { 0 } else { 1 });
    }
    let build = if cfg!(debug_assertions) {
        "DEBUG build, use --release"
    } else {
        "release build"
    };
    if args.backend == "both" || args.scenario == "both" {
        println!("hookd bench: {} cores, {build}", cores());
    }
    let chosen = |choice: &str, name: &str| choice == name || choice == "both";
    let mut runs = Vec::new();
    for backend in ["sqlite", "postgres"]
        .into_iter()
        .filter(|b| chosen(&args.backend, b))
    {
        for scenario in ["throughput", "steady"]
            .into_iter()
            .filter(|s| chosen(&args.scenario, s))
        {
            runs.push((backend, scenario));
        }
    }
    let ok = match runs[..] {
        // One scenario: run it here, on a fresh System, engine and database.
        [(backend, scenario)] => {
            match actix_rt::System::new().block_on(run(backend, scenario, &args)) {
                Ok(passed) => passed,
                Err(e) => {
                    println!("FAIL {backend} {scenario}: {e:#}");
                    false
                }
            }
        }
        // Several: each in a process of its own, so that each peak RSS is its own.
        _ => runs.iter().fold(true, |ok, (backend, scenario)| {
            let status = std::env::current_exe().and_then(|exe| {
                let args = std::env::args()
                    .skip(1)
                    .chain(["--backend", backend, "--scenario", scenario].map(String::from));
                std::process::Command::new(exe).args(args).status()
            });
            ok & status.is_ok_and(|s| s.success())
        }),
    };
    std::process::exit(if ok { 0 } else { 1 });
}

/// Runs one scenario and prints its lines; false if a delivery is missing.
async fn run(backend: &str, scenario: &str, args: &Args) -> anyhow::Result<bool> {
    let mut _dir = None;
    let url = if backend == "sqlite" {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}/bench.db", dir.path().display());
        if args.keep_db {
            println!("keeping {}", dir.keep().display());
        } else {
            _dir = Some(dir);
        }
        url
    } else {
        match pg::fresh_database().await {
            Ok(url) => url,
            Err(e) => {
                println!("postgres  skipped: the private PostgreSQL cluster did not start: {e}");
                return Ok(true);
            }
        }
    };
    let throughput = scenario == "throughput";
    let endpoints = if throughput { args.endpoints } else { 1 };
    let receiver = Receiver::start(endpoints)?;
    let (hookd, producer) = start_hookd(&url, &receiver.ports).await?;
    let (load, conditions) = if throughput {
        let (events, batch, in_flight) = (args.events, args.batch, args.concurrency);
        let load = Load {
            events,
            batch,
            in_flight,
            pace: Duration::ZERO,
        };
        (
            load,
            format!(
                "{events} events x {endpoints} endpoints, {batch}/POST, {in_flight} POSTs in flight"
            ),
        )
    } else {
        let (rate, seconds) = (args.rate, args.seconds);
        let pace = Duration::from_secs(1) / rate;
        let load = Load {
            events: (rate * seconds) as usize,
            batch: 1,
            in_flight: 1024,
            pace,
        };
        (
            load,
            format!("{rate} ev/s for {seconds} s x 1 endpoint, 1 event/POST"),
        )
    };
    let ingest = producer.spawn(load);
    let ingest = ingest.await.context("the producer thread died")??;
    let (events, expected) = (load.events, load.events * endpoints);
    receiver
        .wait_for(expected, Duration::from_secs(args.stall_secs))
        .await;
    let rss = peak_rss_mib();
    let r = receiver.report(&ingest.sent, endpoints);
    let db = counts(&hookd)
        .await
        .unwrap_or_else(|e| format!("counting failed: {e}"));
    hookd.engine.shutdown().await;
    hookd.server.stop(true).await;
    receiver.server.stop(false).await;

    let span = r
        .last_receipt
        .map_or(Duration::ZERO, |t| t - ingest.first_send);
    println!(
        "{backend:<9} {scenario:<10} {conditions}, {} cores: ingest {} ev/s  deliveries {}/s  \
         latency p50 {} p99 {} max {}  peak RSS {rss} MiB (whole process)",
        cores(),
        per_sec(events, ingest.elapsed),
        per_sec(r.received, span),
        ms(r.percentile(0.50)),
        ms(r.percentile(0.99)),
        ms(r.latencies.last().copied().unwrap_or_default()),
    );
    let connections = receiver.log.connections.load(Relaxed);
    println!(
        "{:20}{db}; {} duplicate receipts; {connections} receiver connections",
        "", r.duplicates
    );
    let ok = r.received == expected && r.problems.is_empty();
    if !ok {
        let problems = r.problems.join("; ");
        println!(
            "FAIL {backend} {scenario}: {} of {expected} deliveries arrived; {problems}",
            r.received
        );
    }
    Ok(ok)
}

// ---------------------------------------------------------------------------------------------
// hookd

/// Starts hookd on `url` with a partner, a service key and one endpoint per receiver port.
async fn start_hookd(url: &str, ports: &[u16]) -> anyhow::Result<(hookd::app::Running, Producer)> {
    let mut env: Vec<(String, String)> = [
        ("HOOKD_DATABASE__URL", url),
        (
            "HOOKD_SECRETS__MASTER_KEY",
            "bench-master-key-0123456789-abcdefghij",
        ),
        ("HOOKD_HTTP__LISTEN", "127.0.0.1:0"),
        ("HOOKD_EGRESS__ALLOW_HTTP", "true"),
        ("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.0/8"]"#),
        ("HOOKD_EGRESS__ALLOWED_PORTS", "[]"),
        // The producer is one service key sending hundreds of POSTs a second.
        ("HOOKD_API__RATE_LIMIT_PER_SECOND", "1000000"),
        ("HOOKD_API__RATE_LIMIT_BURST", "1000000"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.extend(std::env::vars().filter(|(k, _)| k.starts_with("HOOKD_")));
    let config = hookd::config::Config::load(None, env)?;
    let concurrency = config.delivery.default_concurrency;
    let running =
        hookd::app::start(config, Arc::new(hookd::domain::clock::SystemClock), false).await?;
    let (db, now) = (&running.shared.db, chrono::Utc::now().timestamp_millis());
    let partner = store::partners::create(db, None, "Bench", now).await?.id;
    let key = store::keys::create(db, Role::Service, None, now).await?.key;
    for port in ports {
        let endpoint = NewEndpoint {
            partner_id: partner.clone(),
            url: format!("http://127.0.0.1:{port}/hook"),
            description: String::new(),
            event_types: Vec::new(),
            schema_version: None,
            concurrency,
            rate_limit: None,
            status: EndpointStatus::Active,
        };
        store::endpoints::create(db, &running.shared.secrets, endpoint, now).await?;
    }
    let producer = Producer {
        url: format!("http://{}/v1/events", running.addr),
        key,
        partner,
    };
    Ok((running, producer))
}

/// The database's view: deliveries, how many were delivered, and attempts.
async fn counts(running: &hookd::app::Running) -> anyhow::Result<String> {
    use sea_orm::{ConnectionTrait, Statement};
    let db = &running.shared.db;
    let sql = "SELECT (SELECT COUNT(*) FROM delivery) AS d, (SELECT COUNT(*) FROM attempt) AS a, \
               (SELECT COUNT(*) FROM delivery WHERE state = 'delivered') AS ok";
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?;
    let row = row.context("no row")?;
    let n = |column| row.try_get::<i64>("", column);
    Ok(format!(
        "database at the last receipt: {} deliveries, {} delivered, {} attempts",
        n("d")?,
        n("ok")?,
        n("a")?
    ))
}

// ---------------------------------------------------------------------------------------------
// The producer: awc, on a thread and System of its own

struct Producer {
    url: String,
    key: String,
    partner: String,
}

struct Ingested {
    /// Each event id, and the instant just before the POST that carried it was sent.
    sent: HashMap<String, Instant>,
    first_send: Instant,
    elapsed: Duration,
}

/// What to publish: `events` events, `batch` per POST, at most `in_flight`
/// POSTs at once, the i-th POST no earlier than `pace` × i after the first.
#[derive(Clone, Copy)]
struct Load {
    events: usize,
    batch: usize,
    in_flight: usize,
    pace: Duration,
}

impl Producer {
    /// Publishes the load from a new thread with its own actix System.
    fn spawn(self, load: Load) -> tokio::sync::oneshot::Receiver<anyhow::Result<Ingested>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let run = move || drop(tx.send(actix_rt::System::new().block_on(self.publish(load))));
        std::thread::Builder::new()
            .name("bench-producer".into())
            .spawn(run)
            .expect("a thread");
        rx
    }

    async fn publish(self, load: Load) -> anyhow::Result<Ingested> {
        let client = awc::Client::builder()
            .timeout(Duration::from_secs(120))
            .finish();
        let (step, n) = (load.batch, load.events);
        let bodies: Vec<_> = (0..n)
            .step_by(step)
            .map(|i| self.events(i, step.min(n - i)))
            .collect();
        let first_send = Instant::now();
        let paced = futures_util::stream::iter(bodies.into_iter().zip(0u32..)).then(
            |(body, i)| async move {
                actix_rt::time::sleep_until((first_send + load.pace * i).into()).await;
                body
            },
        );
        let posts = paced
            .map(|body| self.post(&client, body))
            .buffer_unordered(load.in_flight);
        let done: Vec<_> = posts.collect().await;
        let elapsed = first_send.elapsed();
        let mut sent = HashMap::new();
        for post in done {
            let (ids, at) = post?;
            sent.extend(ids.into_iter().map(|id| (id, at)));
        }
        Ok(Ingested {
            sent,
            first_send,
            elapsed,
        })
    }

    /// `n` events with producer-chosen ids: a JSON array, or an object for one.
    fn events(&self, first: usize, n: usize) -> (Vec<String>, String) {
        let (ids, events): (Vec<String>, Vec<serde_json::Value>) = (first..first + n)
            .map(|seq| {
                let id = format!("evt_{}", ulid::Ulid::new());
                let data = serde_json::json!({"final_cost": "1.20", "currency": "USD", "seq": seq});
                let event = serde_json::json!({"event_id": id, "type": "usage.finalized",
                    "partner_id": self.partner, "data": data});
                (id, event)
            })
            .unzip();
        let body = match <[_; 1]>::try_from(events) {
            Ok([one]) => one.to_string(),
            Err(many) => serde_json::Value::Array(many).to_string(),
        };
        (ids, body)
    }

    /// POSTs the body; returns its event ids with the instant the POST started.
    async fn post(
        &self,
        client: &awc::Client,
        (ids, body): (Vec<String>, String),
    ) -> anyhow::Result<(Vec<String>, Instant)> {
        let at = Instant::now();
        let mut res = client
            .post(&self.url)
            .insert_header(("authorization", format!("Bearer {}", self.key)))
            .insert_header(("content-type", "application/json"))
            .send_body(body)
            .await
            .map_err(|e| anyhow::anyhow!("POST /v1/events: {e}"))?;
        if res.status() != 201 {
            let body = res.body().await.unwrap_or_default();
            anyhow::bail!(
                "POST /v1/events: {} {}",
                res.status(),
                String::from_utf8_lossy(&body)
            );
        }
        Ok((ids, at))
    }
}

// ---------------------------------------------------------------------------------------------
// The receiver: actix-web on a thread of its own, one port per endpoint

#[derive(Default)]
struct Log {
    ports: Vec<u16>,
    /// Per endpoint: event id → when its first delivery had been read.
    first: Mutex<Vec<HashMap<String, Instant>>>,
    distinct: AtomicUsize,
    duplicates: AtomicUsize,
    connections: AtomicUsize,
}

struct Receiver {
    ports: Vec<u16>,
    log: Arc<Log>,
    server: actix_web::dev::ServerHandle,
}

#[derive(Default)]
struct Report {
    received: usize,
    duplicates: usize,
    latencies: Vec<Duration>,
    last_receipt: Option<Instant>,
    problems: Vec<String>,
}

/// Records the first receipt of each event id per endpoint, and answers 200.
async fn receive(req: HttpRequest, _body: web::Bytes, log: web::Data<Log>) -> HttpResponse {
    let at = Instant::now();
    let port = req.app_config().local_addr().port();
    let endpoint = log.ports.iter().position(|p| *p == port).unwrap_or(0);
    let id = req
        .headers()
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let seen = &mut log.first.lock().expect("the receiver log")[endpoint];
    let counter = if seen.contains_key(id) {
        &log.duplicates
    } else {
        seen.insert(id.into(), at);
        &log.distinct
    };
    counter.fetch_add(1, Relaxed);
    HttpResponse::Ok().finish()
}

impl Receiver {
    fn start(endpoints: usize) -> anyhow::Result<Receiver> {
        let listeners: Vec<_> = (0..endpoints)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
            .collect::<Result<_, _>>()?;
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<Result<_, _>>()?;
        let first = Mutex::new(vec![HashMap::new(); endpoints]);
        let log = Arc::new(Log {
            ports: ports.clone(),
            first,
            ..Log::default()
        });
        let (shared, (tx, rx)) = (web::Data::from(log.clone()), std::sync::mpsc::channel());
        let serve = move || {
            actix_rt::System::new().block_on(async move {
                let counter = shared.clone();
                let app = move || {
                    actix_web::App::new()
                        .app_data(shared.clone())
                        .default_service(web::to(receive))
                };
                let mut server = actix_web::HttpServer::new(app)
                    .workers(1)
                    .disable_signals()
                    .on_connect(move |_, _| {
                        counter.connections.fetch_add(1, Relaxed);
                    });
                for listener in listeners {
                    server = server.listen(listener)?;
                }
                let server = server.run();
                let _ = tx.send(server.handle());
                server.await
            })
        };
        std::thread::Builder::new()
            .name("bench-receiver".into())
            .spawn(serve)?;
        let server = rx.recv().context("the receiver did not start")?;
        Ok(Receiver { ports, log, server })
    }

    /// Waits until `expected` distinct deliveries arrived, or none came for `stall`.
    async fn wait_for(&self, expected: usize, stall: Duration) {
        let (mut last, mut since) = (0, Instant::now());
        while self.log.distinct.load(Relaxed) < expected && since.elapsed() < stall {
            if self.log.distinct.load(Relaxed) != last {
                (last, since) = (self.log.distinct.load(Relaxed), Instant::now());
            }
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The latency of every first receipt, and what each endpoint missed.
    fn report(&self, sent: &HashMap<String, Instant>, endpoints: usize) -> Report {
        let first = self.log.first.lock().expect("the receiver log");
        let mut r = Report {
            duplicates: self.log.duplicates.load(Relaxed),
            ..Report::default()
        };
        for (endpoint, seen) in first.iter().enumerate().take(endpoints) {
            let mut known = 0;
            for (id, at) in seen {
                if let Some(send) = sent.get(id) {
                    r.latencies.push(at.saturating_duration_since(*send));
                    known += 1;
                }
                r.last_receipt = r.last_receipt.max(Some(*at));
            }
            r.received += known;
            if known != sent.len() || known != seen.len() {
                let (of, unknown) = (sent.len(), seen.len() - known);
                r.problems.push(format!(
                    "endpoint {endpoint} got {known} of {of} events and {unknown} unknown ids"
                ));
            }
        }
        r.latencies.sort_unstable();
        r
    }
}

impl Report {
    fn percentile(&self, p: f64) -> Duration {
        let rank = (self.latencies.len() as f64 * p).ceil() as usize;
        self.latencies
            .get(rank.max(1) - 1)
            .copied()
            .unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn per_sec(n: usize, over: Duration) -> String {
    let rate = n as f64 / over.as_secs_f64().max(1e-9);
    if rate >= 10_000.0 {
        format!("{:.1}k", rate / 1000.0)
    } else {
        format!("{rate:.0}")
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// VmHWM: the peak resident memory of the whole process (engine, receiver and producer).
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status.lines().find_map(|l| {
        l.strip_prefix("VmHWM:")?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    });
    kib.unwrap_or(0u64) / 1024
}
