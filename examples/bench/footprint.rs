//! `--scenario footprint`: the `single` load (one event per POST, many
//! POSTs in flight) through a `hookd serve` child process, so that the peak
//! RSS and the CPU measured are hookd's alone, without the receiver's and
//! the producer's share of an in-process run.

use std::time::Duration;

use crate::args::Args;
use crate::load::{Load, Producer};
use crate::process::{self, Sampler};
use crate::receiver::{Plan, Receiver};
use crate::report::{detail, per_sec, row, verdict};
use crate::setup;

pub async fn run(backend: &str, args: &Args) -> anyhow::Result<bool> {
    let (events, endpoints) = (args.events, args.endpoints);
    let in_flight = args.concurrency.unwrap_or(16);
    let binary = process::build_binary()?;
    let Some((url, _dir)) = setup::fresh_url(backend, args.keep_db).await? else {
        return Ok(true);
    };
    let receiver = Receiver::start(Plan::port_each(endpoints))?;
    let listen = format!("127.0.0.1:{}", process::free_port()?);
    let env = setup::env(&url, &listen, &[("HOOKD_LOG__FILTER", "warn")]);
    let db = setup::migrated(env.clone()).await?;
    let concurrency = hookd::config::Config::load(None, env.clone())?
        .delivery
        .default_concurrency;
    let made = setup::populate(&db, 1, &receiver.urls, concurrency).await?;
    let mut served = process::serve_healthy(&binary, env, &listen).await?;
    let pid = served.child.id().to_string();
    let idle = process::sample(&pid);
    let sampler = Sampler::start(served.child.id());
    let cpu0 = crate::cost::process_cpu(&pid);
    let producer = Producer::at(&served.base, made);
    let load = Load::one_per_post(events, in_flight);
    let ingest = producer.run(load).await?;
    receiver
        .wait_for(events * endpoints, Duration::from_secs(args.stall_secs))
        .await;
    let cpu = crate::cost::process_cpu(&pid).saturating_sub(cpu0);
    let after = process::sample(&pid);
    let peaks = sampler.finish();
    let exit = process::stop(&mut served.child);
    db.close().await?;
    receiver.server.stop(false).await;
    let report = receiver.report(0..endpoints, |_| &ingest.sent);
    let (counts, ok) = report.check();
    let span = report
        .last_receipt()
        .map_or(Duration::ZERO, |t| t - ingest.first_send);
    let figures = format!(
        "hookd peak RSS {} MiB (idle before: {} MiB); deliveries {}/s, ingest {} ev/s; \
         hookd CPU s/1000 deliveries {:.3}; {counts}",
        peaks.rss_kib.max(after.rss_kib) / 1024,
        idle.rss_kib / 1024,
        per_sec(report.received, span),
        per_sec(events, ingest.elapsed),
        cpu.as_secs_f64() * 1000.0 / report.received.max(1) as f64,
    );
    let conditions = format!(
        "{events} events x {endpoints} endpoint(s), 1 event/POST, {in_flight} POSTs in flight, \
         `hookd serve` child"
    );
    row("footprint", backend, &figures, &conditions);
    let (warnings, first) = process::warnings(&served.log);
    detail(&format!(
        "hookd exit: {exit}; {warnings} WARN/ERROR lines in hookd's log"
    ));
    for line in first {
        detail(&format!("  {line}"));
    }
    Ok(verdict("footprint", backend, ok, &report.problems))
}
