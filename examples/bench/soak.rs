//! `--scenario soak`: steady ingest for `--minutes` (30) at `--rate` events
//! a second (200, one event per POST) to `--endpoints` (10) endpoints of one
//! partner, endpoint 0 answering 500 every other minute. `hookd serve` runs
//! as a child so that the memory and open files sampled are its own. Each
//! minute (to standard error): RSS, open files, the backlog (deliveries not
//! yet delivered, and the oldest one's age) and what arrived. Then endpoint
//! 0 is healthy again, ingest stops, and every delivery must arrive, once.
//!
//! Retries are shortened (`delivery.schedule`, `circuit.cooldown_max`) so
//! that endpoint 0's backlog drains within minutes of its last bad minute,
//! not hours; everything else is the default configuration.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use sea_orm::DatabaseConnection;

use crate::args::Args;
use crate::load::{Load, Producer};
use crate::process;
use crate::receiver::{Plan, Receiver};
use crate::report::{detail, row, status_kib, verdict};
use crate::setup::{self, count};

/// Minutes before RSS and open files are taken as the baseline: two whole
/// cycles of endpoint 0 (healthy, failing), so its backlog's buffers have
/// been grown once.
const WARM_UP: usize = 5;
const SCHEDULE: &str = r#"["0s","5s","30s","1m","2m","2m","2m","2m","2m","2m"]"#;
const COOLDOWN_MAX: &str = "1m";

/// One minute's look at hookd.
struct Minute {
    rss_kib: u64,
    fds: usize,
    backlog: i64,
    oldest_s: i64,
}

/// Deliveries not yet delivered, and the oldest one's age in seconds.
async fn backlog(db: &DatabaseConnection) -> (i64, i64) {
    let waiting = "FROM delivery WHERE state IN ('pending', 'failed', 'delivering')";
    let n = count(db, &format!("SELECT COUNT(*) AS n {waiting}")).await;
    let now = chrono::Utc::now().timestamp_millis();
    let oldest = count(
        db,
        &format!("SELECT COALESCE({now} - MIN(created_at), 0) AS n {waiting}"),
    )
    .await;
    (n.unwrap_or(-1), oldest.map_or(-1, |ms| ms / 1000))
}

/// Growth from `from` to `to`, in percent.
fn growth(from: f64, to: f64) -> f64 {
    (to - from) / from.max(1.0) * 100.0
}

pub async fn run(backend: &str, args: &Args) -> anyhow::Result<bool> {
    let (minutes, endpoints) = (args.minutes.max(1), args.endpoints);
    let rate = args.rate.unwrap_or(200).max(1);
    let binary = process::build_binary()?;
    let Some((url, _dir)) = setup::fresh_url(backend, args.keep_db).await? else {
        return Ok(true);
    };
    let receiver = Receiver::start(Plan::port_each(endpoints))?;
    receiver.log.flapping.store(0, Relaxed);
    let listen = format!("127.0.0.1:{}", process::free_port()?);
    let extra = [
        ("HOOKD_LOG__FILTER", "warn"),
        ("HOOKD_DELIVERY__SCHEDULE", SCHEDULE),
        ("HOOKD_CIRCUIT__COOLDOWN_MAX", COOLDOWN_MAX),
    ];
    let env = setup::env(&url, &listen, &extra);
    let db = setup::migrated(env.clone()).await?;
    let made = setup::populate(&db, 1, &receiver.urls, 8).await?;
    let mut served = process::serve_healthy(&binary, env, &listen).await?;
    let pid = served.child.id().to_string();
    let producer = Producer::at(&served.base, made);
    let per_minute = Load {
        subjects: 0,
        ordered: false,
        events: rate as usize * 60,
        batch: 1,
        in_flight: 8,
        pace: Duration::from_secs(1) / rate,
    };
    let mut sent = HashMap::new();
    let mut seen = Vec::new();
    let started = Instant::now();
    for minute in 1..=minutes {
        let failing = minute % 2 == 0;
        receiver.log.failing.store(failing, Relaxed);
        let ingest = producer.clone().run(per_minute).await?;
        sent.extend(ingest.sent);
        let (waiting, oldest_s) = backlog(&db).await;
        let now = Minute {
            rss_kib: status_kib(&pid, "VmRSS"),
            fds: process::sample(&pid).fds,
            backlog: waiting,
            oldest_s,
        };
        detail(&format!(
            "minute {minute} (endpoint 0 {}): RSS {} MiB, {} open files, backlog {} deliveries \
             (oldest {} s), {} of {} delivered",
            if failing { "failing" } else { "healthy" },
            now.rss_kib / 1024,
            now.fds,
            now.backlog,
            now.oldest_s,
            receiver.distinct(),
            sent.len() * endpoints,
        ));
        seen.push(now);
    }
    receiver.log.failing.store(false, Relaxed);
    let drain = Instant::now();
    let stall = Duration::from_secs(args.stall_secs.max(180));
    receiver.wait_for(sent.len() * endpoints, stall).await;
    let drained = drain.elapsed();
    let last = process::sample(&pid);
    let exit = process::stop(&mut served.child);
    db.close().await?;
    receiver.server.stop(false).await;
    let report = receiver.report(0..endpoints, |_| &sent);
    let (counts, ok) = report.check();
    let base = &seen[WARM_UP.min(seen.len()) - 1];
    let end = seen.last().unwrap_or(base);
    let after = &seen[WARM_UP.min(seen.len()) - 1..];
    let peak_rss = after.iter().map(|m| m.rss_kib).max().unwrap_or(0);
    let peak_fds = after.iter().map(|m| m.fds).max().unwrap_or(0);
    let peak_backlog = seen.iter().map(|m| m.backlog).max().unwrap_or(0);
    let oldest = seen.iter().map(|m| m.oldest_s).max().unwrap_or(0);
    let figures = format!(
        "from minute {} to {}: RSS {} → {} MiB ({:+.1} %; at most {} MiB, {:+.1} %), open files \
         {} → {} ({:+.1} %; at most {}, {:+.1} %); backlog at most {peak_backlog} deliveries \
         (oldest {oldest} s); endpoint 0 answered 500 to {} requests; drained {:.0} s after \
         ingest stopped; {counts}",
        WARM_UP.min(seen.len()),
        seen.len(),
        base.rss_kib / 1024,
        end.rss_kib / 1024,
        growth(base.rss_kib as f64, end.rss_kib as f64),
        peak_rss / 1024,
        growth(base.rss_kib as f64, peak_rss as f64),
        base.fds,
        end.fds,
        growth(base.fds as f64, end.fds as f64),
        peak_fds,
        growth(base.fds as f64, peak_fds as f64),
        receiver.log.refused.load(Relaxed),
        drained.as_secs_f64(),
    );
    let conditions = format!(
        "{minutes} min at {rate} events/s (1 per POST, 8 POSTs in flight) x {endpoints} \
         endpoints, endpoint 0 answering 500 every other minute, `hookd serve` child, \
         delivery.schedule {SCHEDULE}, circuit.cooldown_max {COOLDOWN_MAX}"
    );
    row("soak", backend, &figures, &conditions);
    let (warnings, first) = process::warnings(&served.log);
    detail(&format!(
        "{:.0} s in all; peak RSS {} MiB; open files after the drain {}; hookd exit: {exit}; \
         {warnings} WARN/ERROR lines in hookd's log",
        started.elapsed().as_secs_f64(),
        last.rss_kib / 1024,
        last.fds,
    ));
    for line in first {
        detail(&format!("  {line}"));
    }
    Ok(verdict("soak", backend, ok, &report.problems))
}
