//! `--scenario many`: many endpoints, few events. `hookd serve` runs as a
//! child process so that the memory and open files sampled are its own;
//! partners × endpoints each are served by one receiver on a few ports with a
//! path per endpoint. Each round publishes one event per partner (one POST per
//! 500 events), which fans out to every endpoint of that partner, and waits
//! for every delivery of the round before the next.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use crate::args::Args;
use crate::load::{Load, Producer};
use crate::process::{self, Sampler};
use crate::receiver::{Plan, Receiver};
use crate::report::{detail, row, secs, verdict};
use crate::setup;

pub async fn run(backend: &str, args: &Args) -> anyhow::Result<bool> {
    let (partners, per_partner) = (args.partners.max(1), args.per_partner.max(1));
    let rounds = args.rounds;
    let endpoints = partners * per_partner;
    let binary = process::build_binary()?;
    let Some((url, _dir)) = setup::fresh_url(backend, args.keep_db).await? else {
        return Ok(true);
    };
    let receiver = Receiver::start(Plan {
        endpoints,
        ports: endpoints.min(4),
        stalled: None,
        hold: Duration::ZERO,
    })?;
    let listen = format!("127.0.0.1:{}", process::free_port()?);
    let env = setup::env(&url, &listen, &[("HOOKD_LOG__FILTER", "warn")]);
    let db = setup::migrated(env.clone()).await?;
    let prepared = Instant::now();
    let made = setup::populate(&db, partners, &receiver.urls, 8).await?;
    let prepared = prepared.elapsed();
    let mut served = process::serve_healthy(&binary, env, &listen).await?;
    let pid = served.child.id();
    let idle = process::sample(&pid.to_string());
    let sampler = Sampler::start(pid);
    let producer = Producer::at(&served.base, made);
    let load = Load {
        subjects: 0,
        ordered: false,
        events: partners,
        batch: 500,
        in_flight: 4,
        pace: Duration::ZERO,
    };
    let stall = Duration::from_secs(args.stall_secs);
    let mut sent = vec![HashMap::new(); partners];
    let mut times = Vec::new();
    for round in 1..=rounds {
        let started = Instant::now();
        let ingest = producer.clone().run(load).await?;
        for (all, round) in sent.iter_mut().zip(ingest.by_partner) {
            all.extend(round);
        }
        receiver.wait_for(round * endpoints, stall).await;
        times.push(started.elapsed());
        if receiver.distinct() < round * endpoints {
            detail(&format!(
                "round {round}: deliveries stopped coming for {} s",
                args.stall_secs
            ));
            break;
        }
    }
    let after = process::sample(&pid.to_string());
    let peaks = sampler.finish();
    let db_view = setup::counts(&db).await;
    let exit = process::stop(&mut served.child);
    db.close().await?;
    receiver.server.stop(false).await;
    let report = receiver.report(0..endpoints, |i| &sent[i / per_partner]);
    let (counts, ok) = report.check();
    let rounds_text: Vec<String> = times.iter().map(|t| secs(*t)).collect();
    let figures = format!(
        "time per round {}; hookd peak RSS {} MiB, peak open fds {} (idle before: {} fds; \
         after the rounds: {} fds); {counts}",
        rounds_text.join(" / "),
        peaks.rss_kib.max(after.rss_kib) / 1024,
        peaks.fds.max(after.fds),
        idle.fds,
        after.fds,
    );
    let conditions = format!(
        "{partners} partners x {per_partner} endpoints = {endpoints} endpoints, {rounds} rounds \
         of 1 event per partner ({endpoints} deliveries a round), `hookd serve` child, \
         receiver on {} ports",
        endpoints.min(4)
    );
    row("many", backend, &figures, &conditions);
    let (warnings, first) = process::warnings(&served.log);
    detail(&format!(
        "{db_view}; {} receiver connections; endpoints created in {}; hookd exit: {exit}; \
         {warnings} WARN/ERROR lines in hookd's log",
        receiver.log.connections.load(Relaxed),
        secs(prepared),
    ));
    for line in first {
        detail(&format!("  {line}"));
    }
    Ok(verdict("many", backend, ok, &report.problems))
}
