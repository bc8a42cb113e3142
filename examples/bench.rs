//! End-to-end benchmark: events through `POST /v1/events` into a local receiver.
//!
//! ```text
//! cargo run --release --example bench -- [--backend sqlite|postgres|both]
//!     [--scenario throughput|steady|both] [--events 20000] [--endpoints 10]
//!     [--batch 500] [--concurrency 4] [--rate 500] [--seconds 10]
//! ```
//!
//! hookd runs in this process (`hookd::app::start`) on a fresh database per
//! scenario, with the default configuration except what loopback needs; any
//! `HOOKD_*` variable in the environment overrides a key, as for `hookd serve`.
//! The receiver (plain tokio + httparse, one port per endpoint) and the
//! producer (awc) run on their own threads so the engine keeps its own thread.
//! Latency is from just before the ingest request is sent to the receiver
//! having read the whole delivery. PostgreSQL runs on the tests' private
//! cluster (fsync off, see tests/it/harness/pg.rs).

#[path = "../tests/it/harness/pg.rs"]
#[allow(dead_code)]
mod pg;

use std::{
    collections::{HashMap, hash_map::Entry},
    net::TcpListener as StdListener,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context as _, bail};
use clap::{Parser, ValueEnum};
use futures_util::StreamExt as _;
use hookd::{
    config::Config,
    domain::clock::SystemClock,
    store::{
        self,
        endpoints::{EndpointStatus, NewEndpoint},
        keys::Role,
    },
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

#[derive(Parser, Debug, Clone)]
#[command(about = "Drive events through hookd into a local receiver and measure it")]
struct Args {
    #[arg(long, value_enum, default_value = "both")]
    backend: Which,
    #[arg(long, value_enum, default_value = "both")]
    scenario: Scenario,
    /// Throughput: events to publish.
    #[arg(long, default_value_t = 20_000)]
    events: usize,
    /// Throughput: endpoints (each on its own receiver port) that get every event.
    #[arg(long, default_value_t = 10)]
    endpoints: usize,
    /// Throughput: events per POST.
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// Throughput: POSTs in flight at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Steady: events per second, one event per POST, to one endpoint.
    #[arg(long, default_value_t = 500)]
    rate: u32,
    /// Steady: how long to publish.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Keep the SQLite file (and print where) for digging into it afterwards.
    #[arg(long)]
    keep_db: bool,
    /// Give up when no delivery arrives for this many seconds.
    #[arg(long, default_value_t = 60)]
    stall_secs: u64,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq)]
enum Which {
    Sqlite,
    Postgres,
    Both,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq)]
enum Scenario {
    Throughput,
    Steady,
    Both,
}

const MASTER_KEY: &str = "bench-master-key-0123456789-abcdefghij";

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
        .init();
    let args = Args::parse();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "hookd bench: {cores} cores, {} build; engine, receiver and producer share this process",
        if cfg!(debug_assertions) {
            "DEBUG (use --release)"
        } else {
            "release"
        }
    );
    let backends = match args.backend {
        Which::Both => vec![Which::Sqlite, Which::Postgres],
        one => vec![one],
    };
    let scenarios = match args.scenario {
        Scenario::Both => vec![Scenario::Throughput, Scenario::Steady],
        one => vec![one],
    };
    let mut failed = false;
    for &backend in &backends {
        for &scenario in &scenarios {
            // Each scenario gets a fresh database, engine and System.
            let result = actix_rt::System::new().block_on(run(backend, scenario, &args));
            match result {
                Ok(Some((line, ok))) => {
                    failed |= !ok;
                    println!("{line}");
                }
                Ok(None) => {}
                Err(e) => {
                    failed = true;
                    println!("FAIL {} {scenario:?}: {e:#}", name(backend));
                }
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
    Ok(())
}

fn name(backend: Which) -> &'static str {
    if backend == Which::Postgres {
        "postgres"
    } else {
        "sqlite"
    }
}

/// One scenario on one backend: its report line and whether every delivery
/// arrived; `None` when the backend is unavailable.
async fn run(
    backend: Which,
    scenario: Scenario,
    args: &Args,
) -> anyhow::Result<Option<(String, bool)>> {
    let mut _dir = None;
    let url = if backend == Which::Postgres {
        match pg::fresh_database().await {
            Ok(url) => url,
            Err(e) => {
                println!("postgres  skipped: no private PostgreSQL cluster could be started: {e}");
                return Ok(None);
            }
        }
    } else {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}/bench.db", dir.path().display());
        if args.keep_db {
            println!("keeping {}", dir.keep().display());
        } else {
            _dir = Some(dir);
        }
        url
    };
    let endpoints = if scenario == Scenario::Steady {
        1
    } else {
        args.endpoints
    };
    let receiver = Receiver::start(endpoints)?;
    let hookd = Hookd::start(&url, &receiver.ports).await?;
    reset_peak_rss();

    let (base, key, partner) = (hookd.base.clone(), hookd.key.clone(), hookd.partner.clone());
    let (events, conditions, ingest) = if scenario == Scenario::Throughput {
        let (n, batch, conc) = (args.events, args.batch, args.concurrency);
        let ingest = on_own_thread(move || produce_batches(base, key, partner, n, batch, conc));
        let cond = format!(
            "{n} events x {endpoints} endpoints, batches of {batch}, {conc} POSTs in flight"
        );
        (n, cond, ingest)
    } else {
        let (rate, secs) = (args.rate, args.seconds);
        let ingest = on_own_thread(move || produce_steady(base, key, partner, rate, secs));
        let n = rate as usize * secs as usize;
        let cond = format!("{rate} ev/s for {secs} s x 1 endpoint, one event per POST");
        (n, cond, ingest)
    };
    let ingest = ingest.await.context("the producer thread died")??;
    let expected = events * endpoints;
    receiver
        .wait_for(expected, Duration::from_secs(args.stall_secs))
        .await;
    let rss = peak_rss();
    let report = receiver.report(&ingest.sent, endpoints);
    let db = hookd
        .counts()
        .await
        .unwrap_or_else(|e| format!("db counts failed: {e}"));
    hookd.running.server.stop(true).await;

    let mut line = format!(
        "{:<9} {:<10} {conditions}, {} cores: ingest {} ev/s  deliveries {}/s  latency p50 {} p99 {} max {}  peak RSS {}",
        name(backend),
        format!("{scenario:?}").to_lowercase(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        kilo(events as f64 / ingest.elapsed.as_secs_f64()),
        kilo(report.received as f64 / report.span(ingest.first_send).as_secs_f64()),
        ms(report.percentile(0.50)),
        ms(report.percentile(0.99)),
        ms(report.latencies.last().copied().unwrap_or_default()),
        rss,
    );
    let conns = receiver.log.connections.load(Ordering::Relaxed);
    line.push_str(&format!(
        "\n          ({db}; {} duplicate receipts; {conns} receiver connections)",
        report.duplicates
    ));
    let ok = report.received == expected && report.problems.is_empty();
    if !ok {
        line.push_str(&format!(
            "\nFAIL {} {scenario:?}: {} of {expected} deliveries arrived; {}",
            name(backend),
            report.received,
            report.problems.join("; ")
        ));
    }
    Ok(Some((line, ok)))
}

// ---------------------------------------------------------------------------------------------
// hookd in process

struct Hookd {
    running: hookd::app::Running,
    base: String,
    key: String,
    partner: String,
}

impl Hookd {
    /// Starts hookd on `url` with a partner, a service key and one endpoint per receiver port.
    async fn start(url: &str, ports: &[u16]) -> anyhow::Result<Hookd> {
        let mut env: Vec<(String, String)> = [
            ("HOOKD_DATABASE__URL", url),
            ("HOOKD_SECRETS__MASTER_KEY", MASTER_KEY),
            ("HOOKD_HTTP__LISTEN", "127.0.0.1:0"),
            ("HOOKD_EGRESS__ALLOW_HTTP", "true"),
            ("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.0/8"]"#),
            ("HOOKD_EGRESS__ALLOWED_PORTS", "[]"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        env.extend(std::env::vars().filter(|(k, _)| k.starts_with("HOOKD_")));
        let config = Config::load(None, env)?;
        let concurrency = config.delivery.default_concurrency;
        let running = hookd::app::start(config, Arc::new(SystemClock), false).await?;
        let (db, now) = (&running.shared.db, chrono::Utc::now().timestamp_millis());
        let partner = store::partners::create(db, None, "Bench", now).await?.id;
        let key = store::keys::create(db, Role::Service, None, now).await?.key;
        for port in ports {
            let new = NewEndpoint {
                partner_id: partner.clone(),
                url: format!("http://127.0.0.1:{port}/hook"),
                description: String::new(),
                event_types: Vec::new(),
                concurrency,
                rate_limit: None,
                status: EndpointStatus::Active,
            };
            store::endpoints::create(db, &running.shared.secrets, new, now).await?;
        }
        let base = format!("http://{}", running.addr);
        Ok(Hookd {
            running,
            base,
            key,
            partner,
        })
    }

    /// Deliveries by state and attempts, read back from the database.
    async fn counts(&self) -> anyhow::Result<String> {
        use sea_orm::{ConnectionTrait, Statement};
        let db = &self.running.shared.db;
        let q = |sql: &str| Statement::from_string(db.get_database_backend(), sql);
        let mut out = Vec::new();
        for row in db
            .query_all_raw(q(
                "SELECT state, COUNT(*) AS n FROM delivery GROUP BY state ORDER BY state",
            ))
            .await?
        {
            out.push(format!(
                "{} {}",
                row.try_get::<i64>("", "n")?,
                row.try_get::<String>("", "state")?
            ));
        }
        let row = db
            .query_one_raw(q("SELECT COUNT(*) AS n FROM attempt"))
            .await?;
        let attempts = row.map_or(Ok(0), |r| r.try_get::<i64>("", "n"))?;
        Ok(format!(
            "db: deliveries {}, {attempts} attempts",
            out.join(", ")
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// The producer: awc on its own thread and System

struct Ingested {
    /// Each event id and the instant just before its POST was sent.
    sent: HashMap<String, Instant>,
    first_send: Instant,
    elapsed: Duration,
}

/// Runs `f` on a new thread with its own actix System; the result comes back as a future.
fn on_own_thread<F, Fut, T>(f: F) -> tokio::sync::oneshot::Receiver<T>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let run = move || drop(tx.send(actix_rt::System::new().block_on(f())));
    std::thread::Builder::new()
        .name("bench-producer".into())
        .spawn(run)
        .expect("a producer thread");
    rx
}

fn event_json(partner: &str, seq: usize) -> (String, serde_json::Value) {
    let id = format!("evt_{}", ulid::Ulid::new());
    let event = serde_json::json!({
        "event_id": id, "type": "usage.finalized", "partner_id": partner,
        "data": {"final_cost": "1.20", "currency": "USD", "seq": seq, "account": "acct_0123456789abcdef"},
    });
    (id, event)
}

async fn post(client: &awc::Client, base: &str, key: &str, body: String) -> anyhow::Result<()> {
    let mut res = client
        .post(format!("{base}/v1/events"))
        .insert_header(("authorization", format!("Bearer {key}")))
        .insert_header(("content-type", "application/json"))
        .send_body(body)
        .await
        .map_err(|e| anyhow::anyhow!("POST /v1/events: {e}"))?;
    if res.status().as_u16() != 201 {
        let body = res.body().await.unwrap_or_default();
        bail!(
            "POST /v1/events answered {}: {}",
            res.status(),
            String::from_utf8_lossy(&body)
        );
    }
    Ok(())
}

/// Throughput: `events` events in batches, `concurrency` POSTs in flight.
async fn produce_batches(
    base: String,
    key: String,
    partner: String,
    events: usize,
    batch: usize,
    concurrency: usize,
) -> anyhow::Result<Ingested> {
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(120))
        .finish();
    let batches: Vec<(Vec<String>, String)> = (0..events)
        .step_by(batch)
        .map(|start| {
            let (ids, items): (Vec<_>, Vec<_>) = (start..events.min(start + batch))
                .map(|i| event_json(&partner, i))
                .unzip();
            (ids, serde_json::Value::Array(items).to_string())
        })
        .collect();
    let first_send = Instant::now();
    let results: Vec<anyhow::Result<(Vec<String>, Instant)>> = futures_util::stream::iter(batches)
        .map(|(ids, body)| {
            let (client, base, key) = (&client, &base, &key);
            async move {
                let at = Instant::now();
                post(client, base, key, body).await.map(|()| (ids, at))
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let elapsed = first_send.elapsed();
    let mut sent = HashMap::with_capacity(events);
    for r in results {
        let (ids, at) = r?;
        sent.extend(ids.into_iter().map(|id| (id, at)));
    }
    Ok(Ingested {
        sent,
        first_send,
        elapsed,
    })
}

/// Steady: one event per POST at `rate` per second for `seconds`, paced by the clock.
async fn produce_steady(
    base: String,
    key: String,
    partner: String,
    rate: u32,
    seconds: u64,
) -> anyhow::Result<Ingested> {
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(30))
        .finish();
    let total = rate as usize * seconds as usize;
    let period = Duration::from_secs(1) / rate;
    let first_send = Instant::now();
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        actix_rt::time::sleep_until((first_send + period * i as u32).into()).await;
        let (id, event) = event_json(&partner, i);
        let (client, base, key) = (client.clone(), base.clone(), key.clone());
        tasks.push(actix_rt::spawn(async move {
            let at = Instant::now();
            post(&client, &base, &key, event.to_string())
                .await
                .map(|()| (id, at))
        }));
    }
    let mut sent = HashMap::with_capacity(total);
    for t in tasks {
        let (id, at) = t.await??;
        sent.insert(id, at);
    }
    Ok(Ingested {
        sent,
        first_send,
        elapsed: first_send.elapsed(),
    })
}

// ---------------------------------------------------------------------------------------------
// The receiver: one port per endpoint, answers 200 at once, records the first receipt of each id

#[derive(Default)]
struct Log {
    /// Per endpoint: event id → instant its first delivery was read.
    first: Mutex<Vec<HashMap<String, Instant>>>,
    distinct: AtomicUsize,
    duplicates: AtomicUsize,
    connections: AtomicUsize,
}

struct Receiver {
    ports: Vec<u16>,
    log: Arc<Log>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Receiver {
    fn start(endpoints: usize) -> anyhow::Result<Receiver> {
        let listeners = (0..endpoints)
            .map(|_| StdListener::bind("127.0.0.1:0"))
            .collect::<std::io::Result<Vec<_>>>()?;
        let ports = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<Result<_, _>>()?;
        let log = Arc::new(Log {
            first: Mutex::new(vec![HashMap::new(); endpoints]),
            ..Log::default()
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = log.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name("bench-receiver".into())
            .spawn(move || {
                rt.block_on(async move {
                    for (endpoint, listener) in listeners.into_iter().enumerate() {
                        listener
                            .set_nonblocking(true)
                            .expect("a non-blocking listener");
                        let listener =
                            tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                        let log = shared.clone();
                        tokio::spawn(async move {
                            while let Ok((stream, _)) = listener.accept().await {
                                log.connections.fetch_add(1, Ordering::Relaxed);
                                tokio::spawn(serve(stream, endpoint, log.clone()));
                            }
                        });
                    }
                    let _ = stopped.await;
                })
            })?;
        Ok(Receiver {
            ports,
            log,
            _stop: stop,
        })
    }

    /// Waits until `expected` distinct deliveries arrived, or none came for `stall`.
    async fn wait_for(&self, expected: usize, stall: Duration) {
        let (mut last, mut since) = (0, Instant::now());
        loop {
            let now = self.log.distinct.load(Ordering::Relaxed);
            if now >= expected || since.elapsed() > stall {
                return;
            }
            if now != last {
                (last, since) = (now, Instant::now());
            }
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn report(&self, sent: &HashMap<String, Instant>, endpoints: usize) -> Report {
        let first = self.log.first.lock().expect("the receiver log");
        let mut report = Report {
            duplicates: self.log.duplicates.load(Ordering::Relaxed),
            ..Report::default()
        };
        for (endpoint, seen) in first.iter().enumerate().take(endpoints) {
            let mut unknown = 0;
            for (id, at) in seen {
                match sent.get(id) {
                    Some(send) => report.latencies.push(at.saturating_duration_since(*send)),
                    None => unknown += 1,
                }
                report.last_receipt = report.last_receipt.max(Some(*at));
            }
            let known = seen.len() - unknown;
            report.received += known;
            if known != sent.len() || unknown > 0 {
                report.problems.push(format!(
                    "endpoint {endpoint} got {known} of {} events ({unknown} unknown ids)",
                    sent.len()
                ));
            }
        }
        report.latencies.sort_unstable();
        report
    }
}

async fn serve(
    mut stream: tokio::net::TcpStream,
    endpoint: usize,
    log: Arc<Log>,
) -> std::io::Result<()> {
    const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
    stream.set_nodelay(true)?;
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    loop {
        // A whole request in the buffer: (bytes it spans, its webhook-id).
        let complete = {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut req = httparse::Request::new(&mut headers);
            match req.parse(&buf) {
                Ok(httparse::Status::Complete(head)) => {
                    let header = |name: &str| {
                        req.headers
                            .iter()
                            .find(|h| h.name.eq_ignore_ascii_case(name))
                            .map(|h| h.value)
                    };
                    let len: usize = header("content-length")
                        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok())
                        .unwrap_or(0);
                    let id = String::from_utf8_lossy(header("webhook-id").unwrap_or_default())
                        .into_owned();
                    (buf.len() >= head + len).then_some((head + len, id))
                }
                Ok(httparse::Status::Partial) => None,
                Err(e) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
            }
        };
        match complete {
            Some((used, id)) => {
                let at = Instant::now();
                let new = match log.first.lock().expect("the receiver log")[endpoint].entry(id) {
                    Entry::Vacant(slot) => {
                        slot.insert(at);
                        true
                    }
                    Entry::Occupied(_) => false,
                };
                let counter = if new { &log.distinct } else { &log.duplicates };
                counter.fetch_add(1, Ordering::Relaxed);
                buf.drain(..used);
                stream.write_all(OK).await?;
            }
            None => {
                if stream.read_buf(&mut buf).await? == 0 {
                    return Ok(());
                }
            }
        }
    }
}

#[derive(Default)]
struct Report {
    received: usize,
    duplicates: usize,
    latencies: Vec<Duration>,
    last_receipt: Option<Instant>,
    problems: Vec<String>,
}

impl Report {
    fn percentile(&self, p: f64) -> Duration {
        let n = self.latencies.len();
        if n == 0 {
            return Duration::ZERO;
        }
        self.latencies[((n as f64 * p).ceil() as usize).clamp(1, n) - 1]
    }
    /// From the first ingest to the last receipt.
    fn span(&self, first_send: Instant) -> Duration {
        self.last_receipt
            .map_or(Duration::ZERO, |t| t.saturating_duration_since(first_send))
    }
}

// ---------------------------------------------------------------------------------------------
// Formatting and peak RSS

fn kilo(x: f64) -> String {
    if x >= 10_000.0 {
        format!("{:.1}k", x / 1000.0)
    } else {
        format!("{x:.0}")
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Resets VmHWM so each scenario reports its own peak (Linux ≥ 4.0).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// VmHWM of this whole process (engine, receiver and producer together).
fn peak_rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or_else(|| "unknown".into(), |kb| format!("{} MiB", kb / 1024))
}
