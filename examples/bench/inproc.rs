//! One run with hookd in this process (`hookd::app::start`) on a fresh
//! database: start the receiver and hookd, publish a load, wait for the
//! healthy endpoints to have every event, and collect what happened.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::load::{Ingested, Load, Producer};
use crate::receiver::{self, Receiver, Report};
use crate::setup;

/// What a run measured.
pub struct Outcome {
    pub ingest: Ingested,
    /// The healthy endpoints' receipts.
    pub report: Report,
    pub healthy: usize,
    /// Peak RSS of this whole process (engine, receiver and producer).
    pub rss_mib: u64,
    pub db: String,
    pub connections: usize,
    /// Requests the stalled endpoint held.
    pub held: usize,
    /// With subjects: events received before an event of their subject
    /// committed earlier (on any endpoint).
    pub order_violations: Option<usize>,
    /// CPU of hookd and PostgreSQL, and the database's counts, over the load.
    pub cost: crate::cost::Cost,
    /// Deliveries the endpoint actors handed back unattempted, by why.
    pub handed_back: String,
}

/// Runs `load` through hookd on `backend` into a receiver set up by `plan`;
/// `None` if the backend is not available here.
pub async fn run(
    backend: &str,
    keep_db: bool,
    stall: Duration,
    plan: receiver::Plan,
    extra_env: &[(&str, &str)],
    load: Load,
) -> anyhow::Result<Option<Outcome>> {
    let Some((url, _dir)) = setup::fresh_url(backend, keep_db).await? else {
        return Ok(None);
    };
    let stalled = plan.stalled;
    let before_receiver = crate::cost::thread_ids();
    let receiver = Receiver::start(plan)?;
    let others = crate::cost::Others {
        receiver: &crate::cost::thread_ids() - &before_receiver,
    };
    let config = hookd::config::Config::load(None, setup::env(&url, "127.0.0.1:0", extra_env))?;
    let concurrency = config.delivery.default_concurrency;
    let clock = Arc::new(hookd::domain::clock::SystemClock);
    let hookd = hookd::app::start(config, clock, false).await?;
    let made = setup::populate(&hookd.shared.db, 1, &receiver.urls, concurrency).await?;
    if load.ordered {
        use sea_orm::ConnectionTrait as _;
        hookd
            .shared
            .db
            .execute_unprepared("UPDATE endpoint SET ordering = 'subject'")
            .await?;
    }
    let producer = Producer {
        url: format!("http://{}/v1/events", hookd.addr),
        key: made.key,
        partners: made.partners,
    };
    let (cpu0, pg0) = (others.hookd_cpu(), crate::cost::postgres_cpu());
    let counts0 = crate::cost::DbCounts::read(&hookd.shared.db).await;
    let oldest_first = OldestFirst::sample(hookd.shared.clone());
    let ingest = producer.run(load).await?;
    let healthy: Vec<usize> = (0..receiver.urls.len())
        .filter(|i| Some(*i) != stalled)
        .collect();
    receiver.wait_for(load.events * healthy.len(), stall).await;
    let (cpu1, pg1) = (others.hookd_cpu(), crate::cost::postgres_cpu());
    let postgres = backend == "postgres";
    if postgres {
        // Idle connections pass on their statistics within 10 s.
        actix_rt::time::sleep(Duration::from_secs(11)).await;
    }
    let counts1 = crate::cost::DbCounts::read(&hookd.shared.db).await;
    let delivered = receiver.distinct();
    for line in crate::cost::top_statements(&hookd.shared.db, delivered).await {
        eprintln!("  {line}");
    }
    let cost = crate::cost::Cost {
        hookd: cpu1.saturating_sub(cpu0),
        postgres: pg1.saturating_sub(pg0),
        db: postgres.then_some((counts0, counts1)),
    };
    let rss_mib = crate::report::peak_rss_mib("self");
    let report = receiver.report(healthy.iter().copied(), |_| &ingest.sent);
    let db = setup::counts(&hookd.shared.db).await;
    let order_violations = if load.subjects > 0 {
        let feed = crate::ordered::feed(&hookd.shared.db).await?;
        Some(
            healthy
                .iter()
                .map(|e| crate::ordered::violations(&feed, &receiver.first_receipts(*e)))
                .sum(),
        )
    } else {
        None
    };
    let handed_back = format!(
        "{}; {}",
        handed_back(&hookd.shared.metrics),
        oldest_first.describe()
    );
    hookd.engine.shutdown().await;
    hookd.server.stop(true).await;
    receiver.server.stop(false).await;
    Ok(Some(Outcome {
        ingest,
        report,
        healthy: healthy.len(),
        rss_mib,
        db,
        connections: receiver.log.connections.load(Relaxed),
        held: receiver.log.held.load(Relaxed),
        order_violations,
        cost,
        handed_back,
    }))
}

/// How many endpoints claimed oldest first (fresh work waiting as rows),
/// sampled every 20 ms from the load's start until the run is read.
struct OldestFirst {
    samples: Arc<std::sync::atomic::AtomicU64>,
    endpoints: Arc<std::sync::atomic::AtomicU64>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl OldestFirst {
    fn sample(shared: Arc<hookd::delivery::Shared>) -> OldestFirst {
        let o = OldestFirst {
            samples: Arc::default(),
            endpoints: Arc::default(),
            stop: Arc::default(),
        };
        let (samples, endpoints, stop) = (o.samples.clone(), o.endpoints.clone(), o.stop.clone());
        actix_rt::spawn(async move {
            while !stop.load(Relaxed) {
                samples.fetch_add(1, Relaxed);
                endpoints.fetch_add(shared.behind.count() as u64, Relaxed);
                actix_rt::time::sleep(Duration::from_millis(20)).await;
            }
        });
        o
    }

    /// "endpoints oldest first: 1.3 on average", and stops sampling.
    fn describe(&self) -> String {
        self.stop.store(true, Relaxed);
        let samples = self.samples.load(Relaxed).max(1);
        let average = self.endpoints.load(Relaxed) as f64 / samples as f64;
        format!("endpoints oldest first: {average:.2} on average")
    }
}

/// "handed back unattempted: none" or the non-zero counts by reason.
fn handed_back(metrics: &hookd::metrics::Metrics) -> String {
    let counts: Vec<String> = hookd::domain::hand_back::HandBack::ALL
        .into_iter()
        .filter_map(|why| {
            let labels = hookd::metrics::ReasonLabels {
                reason: why.as_str(),
            };
            let n = metrics.deliveries_handed_back.get_or_create(&labels).get();
            (n > 0).then(|| format!("{} {n}", why.as_str()))
        })
        .collect();
    if counts.is_empty() {
        "handed back unattempted: none".into()
    } else {
        format!("handed back unattempted: {}", counts.join(", "))
    }
}

impl Outcome {
    /// Deliveries per second from the first send to the last receipt.
    pub fn delivery_rate(&self) -> String {
        let span = self
            .report
            .last_receipt()
            .map_or(Duration::ZERO, |t| t - self.ingest.first_send);
        crate::report::per_sec(self.report.received, span)
    }

    /// "p50 … p99 … max …" from ingest to receipt.
    pub fn latency(&self) -> String {
        use crate::report::ms;
        let r = &self.report;
        format!(
            "latency p50 {} p99 {} max {}",
            ms(r.percentile(0.50)),
            ms(r.percentile(0.99)),
            ms(r.max_latency())
        )
    }

    /// Prints the row of a throughput-like run (ingest, deliveries, latency,
    /// peak RSS, counts) and the database's view under it; true if the counts hold.
    pub fn print(&self, scenario: &str, backend: &str, conditions: &str) -> bool {
        let (counts, ok) = self.report.check();
        let order = match self.order_violations {
            Some(n) => format!(", order violations {n}"),
            None => String::new(),
        };
        let figures = format!(
            "ingest {} ev/s, deliveries {}/s, {}, peak RSS {} MiB (whole process), {}, {counts}{order}",
            crate::report::per_sec(self.ingest.sent.len(), self.ingest.elapsed),
            self.delivery_rate(),
            self.latency(),
            self.rss_mib,
            self.cost.describe(self.report.received),
        );
        crate::report::row(scenario, backend, &figures, conditions);
        self.print_details("");
        crate::report::verdict(scenario, backend, ok, &self.report.problems)
    }

    /// The database's view and the receiver's connections, under a row.
    pub fn print_details(&self, label: &str) {
        crate::report::detail(&format!(
            "{label}{}; {} receiver connections; {}",
            self.db, self.connections, self.handed_back
        ));
    }
}

/// `run` with every endpoint healthy on a port of its own, and the command
/// line's database and stall options.
pub async fn run_healthy(
    backend: &str,
    args: &crate::args::Args,
    endpoints: usize,
    load: Load,
) -> anyhow::Result<Option<Outcome>> {
    let plan = receiver::Plan::port_each(endpoints);
    let stall = Duration::from_secs(args.stall_secs);
    run(backend, args.keep_db, stall, plan, &[], load).await
}
