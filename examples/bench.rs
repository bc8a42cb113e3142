//! End-to-end benchmark: events through `POST /v1/events` into a local receiver.
//!
//! ```text
//! cargo run --release --example bench -- [--backend sqlite|postgres|both]
//!     [--scenario throughput|steady|both] [--events 20000] [--endpoints 10]
//!     [--batch 500] [--concurrency 4] [--rate 500] [--seconds 10] [--keep-db]
//! ```
//!
//! Each scenario starts hookd in this process (`hookd::app::start`) on a fresh
//! database, with the default configuration except what loopback delivery
//! needs; `HOOKD_*` variables in the environment override keys as for `hookd
//! serve`. The receiver (tokio + httparse, one port per endpoint, answers 200 at
//! once) and the producer (awc) run on threads of their own, so the engine keeps
//! its thread. Latency runs from just before the ingest POST is sent to the
//! moment the receiver has read the whole delivery. PostgreSQL is the tests'
//! private cluster (fsync off; see tests/it/harness/pg.rs).

#[path = "../tests/it/harness/pg.rs"]
#[allow(dead_code)]
mod pg;

use std::collections::{HashMap, hash_map::Entry};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use futures_util::StreamExt as _;
use hookd::store::{self, endpoints::EndpointStatus, endpoints::NewEndpoint, keys::Role};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

#[derive(Parser, Debug, Clone)]
#[command(about = "Drive events through hookd into a local receiver and measure it")]
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
}

fn main() {
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let args = Args::parse();
    let build = if cfg!(debug_assertions) {
        "DEBUG build (use --release)"
    } else {
        "release build"
    };
    println!(
        "hookd bench: {} cores, {build}; peak RSS is the whole process",
        cores()
    );
    let mut ok = true;
    for backend in ["sqlite", "postgres"]
        .into_iter()
        .filter(|b| [*b, "both"].contains(&&*args.backend))
    {
        for scenario in ["throughput", "steady"]
            .into_iter()
            .filter(|s| [*s, "both"].contains(&&*args.scenario))
        {
            // A fresh System, engine and database per scenario.
            match actix_rt::System::new().block_on(run(backend, scenario, &args)) {
                Ok(passed) => ok &= passed,
                Err(e) => {
                    ok = false;
                    println!("FAIL {backend} {scenario}: {e:#}");
                }
            }
        }
    }
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
    let hookd = Hookd::start(&url, &receiver.ports).await?;
    reset_peak_rss();
    let (base, key, partner) = (hookd.base.clone(), hookd.key.clone(), hookd.partner.clone());
    let (events, conditions, ingest) = if throughput {
        let (n, batch, conc) = (args.events, args.batch, args.concurrency);
        let ingest = on_own_thread(move || produce_batches(base, key, partner, n, batch, conc));
        let conditions =
            format!("{n} events x {endpoints} endpoints, {batch}/POST, {conc} POSTs in flight");
        (n, conditions, ingest)
    } else {
        let (rate, secs) = (args.rate, args.seconds);
        let ingest = on_own_thread(move || produce_steady(base, key, partner, rate, secs));
        let conditions = format!("{rate} ev/s for {secs} s x 1 endpoint, 1 event/POST");
        ((rate * secs) as usize, conditions, ingest)
    };
    let ingest = ingest.await.context("the producer thread died")??;
    let expected = events * endpoints;
    receiver
        .wait_for(expected, Duration::from_secs(args.stall_secs))
        .await;
    let rss = peak_rss_mib();
    let r = receiver.report(&ingest.sent, endpoints);
    let db = hookd
        .counts()
        .await
        .unwrap_or_else(|e| format!("counting failed: {e}"));
    hookd.running.engine.shutdown().await;
    hookd.running.server.stop(true).await;

    let span = r
        .last_receipt
        .map_or(Duration::ZERO, |t| t - ingest.first_send);
    println!(
        "{backend:<9} {scenario:<10} {conditions}, {} cores: ingest {} ev/s  deliveries {}/s  \
         latency p50 {} p99 {} max {}  peak RSS {rss} MiB",
        cores(),
        rate(events, ingest.elapsed),
        rate(r.received, span),
        ms(r.percentile(0.50)),
        ms(r.percentile(0.99)),
        ms(r.latencies.last().copied().unwrap_or_default()),
    );
    println!(
        "{:20}{db}; {} duplicates; {} receiver connections",
        "", r.duplicates, r.connections
    );
    let ok = r.received == expected && r.problems.is_empty();
    if !ok {
        println!(
            "FAIL {backend} {scenario}: {} of {expected} deliveries arrived; {}",
            r.received,
            r.problems.join("; ")
        );
    }
    Ok(ok)
}

/// hookd on its own database: a partner, a service key, one endpoint per port.
struct Hookd {
    running: hookd::app::Running,
    base: String,
    key: String,
    partner: String,
}

impl Hookd {
    async fn start(url: &str, ports: &[u16]) -> anyhow::Result<Hookd> {
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
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        env.extend(std::env::vars().filter(|(k, _)| k.starts_with("HOOKD_")));
        let config = hookd::config::Config::load(None, env)?;
        let concurrency = config.delivery.default_concurrency;
        let clock = Arc::new(hookd::domain::clock::SystemClock);
        let running = hookd::app::start(config, clock, false).await?;
        let (db, now) = (&running.shared.db, chrono::Utc::now().timestamp_millis());
        let partner = store::partners::create(db, None, "Bench", now).await?.id;
        let key = store::keys::create(db, Role::Service, None, now).await?.key;
        for port in ports {
            let endpoint = NewEndpoint {
                partner_id: partner.clone(),
                url: format!("http://127.0.0.1:{port}/hook"),
                description: String::new(),
                event_types: Vec::new(),
                concurrency,
                rate_limit: None,
                schema_version: None,
                status: EndpointStatus::Active,
            };
            store::endpoints::create(db, &running.shared.secrets, endpoint, now).await?;
        }
        let base = format!("http://{}", running.addr);
        Ok(Hookd {
            running,
            base,
            key,
            partner,
        })
    }

    /// The database's view: deliveries, how many were delivered, and attempts.
    async fn counts(&self) -> anyhow::Result<String> {
        use sea_orm::{ConnectionTrait, Statement};
        let db = &self.running.shared.db;
        let sql = "SELECT (SELECT COUNT(*) FROM delivery) AS d, (SELECT COUNT(*) FROM attempt) AS a, \
                   (SELECT COUNT(*) FROM delivery WHERE state = 'delivered') AS ok";
        let stmt = Statement::from_string(db.get_database_backend(), sql);
        let row = db.query_one_raw(stmt).await?.context("no row")?;
        let n = |c| row.try_get::<i64>("", c);
        Ok(format!(
            "database: {} deliveries, {} delivered, {} attempts",
            n("d")?,
            n("ok")?,
            n("a")?
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// The producer: awc, on its own thread and System.

struct Ingested {
    /// Each event id, and the instant just before the POST that carried it was sent.
    sent: HashMap<String, Instant>,
    first_send: Instant,
    elapsed: Duration,
}

/// Runs `f` on a new thread with its own actix System; its result arrives on the receiver.
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
        .expect("a thread");
    rx
}

fn event(partner: &str, seq: usize) -> (String, serde_json::Value) {
    let id = format!("evt_{}", ulid::Ulid::new());
    let data = serde_json::json!({"final_cost": "1.20", "currency": "USD", "seq": seq, "account": "acct_0123456789"});
    let event = serde_json::json!({"event_id": id, "type": "usage.finalized", "partner_id": partner, "data": data});
    (id, event)
}

async fn post(
    client: &awc::Client,
    base: &str,
    key: &str,
    body: String,
) -> anyhow::Result<Instant> {
    let at = Instant::now();
    let mut res = client
        .post(format!("{base}/v1/events"))
        .insert_header(("authorization", format!("Bearer {key}")))
        .insert_header(("content-type", "application/json"))
        .send_body(body)
        .await
        .map_err(|e| anyhow::anyhow!("POST /v1/events: {e}"))?;
    if res.status() != 201 {
        let body = res.body().await.unwrap_or_default();
        anyhow::bail!(
            "POST /v1/events answered {}: {}",
            res.status(),
            String::from_utf8_lossy(&body)
        );
    }
    Ok(at)
}

/// Throughput: every event in batches, `concurrency` POSTs in flight.
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
                .map(|i| event(&partner, i))
                .unzip();
            (ids, serde_json::Value::Array(items).to_string())
        })
        .collect();
    let first_send = Instant::now();
    let posts = batches.into_iter().map(|(ids, body)| {
        let (client, base, key) = (&client, &base, &key);
        async move { post(client, base, key, body).await.map(|at| (ids, at)) }
    });
    let done: Vec<_> = futures_util::stream::iter(posts)
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let elapsed = first_send.elapsed();
    let mut sent = HashMap::with_capacity(events);
    for result in done {
        let (ids, at) = result?;
        sent.extend(ids.into_iter().map(|id| (id, at)));
    }
    Ok(Ingested {
        sent,
        first_send,
        elapsed,
    })
}

/// Steady: one event per POST, `rate` per second for `seconds`, paced by the clock.
async fn produce_steady(
    base: String,
    key: String,
    partner: String,
    rate: u32,
    seconds: u32,
) -> anyhow::Result<Ingested> {
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(30))
        .finish();
    let period = Duration::from_secs(1) / rate;
    let first_send = Instant::now();
    let mut posts = Vec::new();
    for i in 0..rate * seconds {
        actix_rt::time::sleep_until((first_send + period * i).into()).await;
        let (id, event) = event(&partner, i as usize);
        let (client, base, key) = (client.clone(), base.clone(), key.clone());
        posts.push(actix_rt::spawn(async move {
            post(&client, &base, &key, event.to_string())
                .await
                .map(|at| (id, at))
        }));
    }
    let mut sent = HashMap::with_capacity(posts.len());
    for p in posts {
        let (id, at) = p.await??;
        sent.insert(id, at);
    }
    Ok(Ingested {
        sent,
        first_send,
        elapsed: first_send.elapsed(),
    })
}

// ---------------------------------------------------------------------------------------------
// The receiver: a thread of its own, one port per endpoint, the first receipt of each event id.

#[derive(Default)]
struct Log {
    /// Per endpoint: event id → when its first delivery had been read.
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

#[derive(Default)]
struct Report {
    received: usize,
    duplicates: usize,
    connections: usize,
    latencies: Vec<Duration>,
    last_receipt: Option<Instant>,
    problems: Vec<String>,
}

impl Receiver {
    fn start(endpoints: usize) -> anyhow::Result<Receiver> {
        let listeners = (0..endpoints)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
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
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let shared = log.clone();
        let serve_all = async move {
            for (endpoint, listener) in listeners.into_iter().enumerate() {
                listener.set_nonblocking(true)?;
                let listener = tokio::net::TcpListener::from_std(listener)?;
                let log = shared.clone();
                tokio::spawn(async move {
                    while let Ok((stream, _)) = listener.accept().await {
                        log.connections.fetch_add(1, Relaxed);
                        tokio::spawn(serve(stream, endpoint, log.clone()));
                    }
                });
            }
            let _ = stopped.await;
            std::io::Result::Ok(())
        };
        let run = move || runtime.block_on(serve_all).expect("the receiver runs");
        std::thread::Builder::new()
            .name("bench-receiver".into())
            .spawn(run)?;
        Ok(Receiver {
            ports,
            log,
            _stop: stop,
        })
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

    /// Latencies of every first receipt, and what is missing or unknown per endpoint.
    fn report(&self, sent: &HashMap<String, Instant>, endpoints: usize) -> Report {
        let first = self.log.first.lock().expect("the receiver log");
        let mut r = Report {
            duplicates: self.log.duplicates.load(Relaxed),
            connections: self.log.connections.load(Relaxed),
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
                let unknown = seen.len() - known;
                r.problems.push(format!(
                    "endpoint {endpoint} got {known} of {} events and {unknown} unknown ids",
                    sent.len()
                ));
            }
        }
        r.latencies.sort_unstable();
        r
    }
}

impl Report {
    fn percentile(&self, p: f64) -> Duration {
        let n = self.latencies.len();
        let rank = ((n as f64 * p).ceil() as usize).clamp(1, n.max(1));
        self.latencies.get(rank - 1).copied().unwrap_or_default()
    }
}

/// HTTP/1.1 with keep-alive: reads each request whole (Content-Length), records it, answers 200.
async fn serve(
    mut stream: tokio::net::TcpStream,
    endpoint: usize,
    log: Arc<Log>,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(16 * 1024);
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        let parsed = req
            .parse(&buf)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        let header = |name: &str| {
            req.headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| h.value)
        };
        let whole = match parsed {
            httparse::Status::Partial => None,
            httparse::Status::Complete(head) => {
                let len = header("content-length")
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok());
                let id =
                    String::from_utf8_lossy(header("webhook-id").unwrap_or_default()).into_owned();
                Some((head + len.unwrap_or(0), id))
            }
        };
        match whole {
            Some((end, id)) if buf.len() >= end => {
                let at = Instant::now();
                let first = match log.first.lock().expect("the receiver log")[endpoint].entry(id) {
                    Entry::Vacant(slot) => {
                        slot.insert(at);
                        true
                    }
                    Entry::Occupied(_) => false,
                };
                (if first {
                    &log.distinct
                } else {
                    &log.duplicates
                })
                .fetch_add(1, Relaxed);
                buf.drain(..end);
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                    .await?;
            }
            _ if stream.read_buf(&mut buf).await? == 0 => return Ok(()),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn rate(n: usize, over: Duration) -> String {
    let per_sec = n as f64 / over.as_secs_f64().max(1e-9);
    if per_sec >= 10_000.0 {
        format!("{:.1}k", per_sec / 1000.0)
    } else {
        format!("{per_sec:.0}")
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Resets the process's VmHWM (Linux ≥ 4.0), so each scenario reports its own peak.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
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
