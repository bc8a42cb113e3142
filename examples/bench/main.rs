//! End-to-end benchmark: events through `POST /v1/events` into a local receiver.
//!
//! ```text
//! cargo run --release --example bench -- [--backend sqlite|postgres|both]
//!     [--scenario throughput|steady|paced|single|footprint|slow|many|soak|both] [--keep-db]
//!     throughput: [--events 20000] [--endpoints 10] [--batch 500] [--concurrency 4]
//!     steady, paced: [--rate 500] [--seconds 10] [--endpoints 10] (steady: 1 endpoint)
//!     single, footprint: [--events 20000] [--endpoints 10] [--concurrency 16]
//!     slow: [--events 20000] [--endpoints 10] [--batch 500] [--timeout-secs 2]
//!     many: [--partners 100] [--per-partner 100] [--rounds 5]
//!     soak: [--minutes 30] [--rate 200] [--endpoints 10]
//!     ordered: [--events 20000] [--subjects 1000] [--ordering subject|none] [--batch 500]
//! cargo run --release --example bench -- --backend postgres --instances 3
//!     [--events 20000] [--endpoints 20] [--cap 2] [--delay-ms 0] [--lease-ttl 15]
//! ```
//!
//! Every scenario checks that each expected delivery arrived exactly once,
//! prints its figures as a row of one Markdown table on standard output
//! (date, commit, build, cores, backend, scenario, figures, conditions; see
//! `report`), and exits non-zero on duplicates or lost deliveries. Details
//! under a row go to standard error.
//!
//! `throughput`, `steady`, `paced`, `single` and `slow` start hookd in this
//! process (`hookd::app::start`) on a fresh database, with the default
//! configuration except what loopback delivery needs; `HOOKD_*` variables in
//! the environment override keys as for `hookd serve`. `footprint`, `many`, `soak`
//! and `--instances N` run real `hookd serve` child processes instead (see
//! `footprint.rs`, `many.rs`, `soak.rs`, `cluster.rs`). The receiver (actix-web) and the producer (awc)
//! run on threads of their own, so the engine keeps its thread. Latency runs
//! from just before the ingest POST is sent to the moment the receiver has
//! read the whole delivery. PostgreSQL is the tests' private cluster (fsync
//! off; see tests/it/harness/pg/).
//!
//! Modules: `args` (command line), `setup` (database, configuration, rows),
//! `receiver`, `load` (the producer), `inproc` (one in-process run),
//! `process` (hookd as a child, /proc sampling), `report` (rows and
//! formatting), and one module per scenario.

#![allow(
    clippy::disallowed_methods,
    reason = "an example runs outside hookd: its own HTTP client and wall clock"
)]

#[path = "../../tests/it/harness/pg/mod.rs"]
#[allow(dead_code)]
mod pg;

mod args;
mod cluster;
mod cost;
mod footprint;
mod inproc;
mod load;
mod many;
mod ordered;
mod paced;
mod process;
mod receiver;
mod report;
mod setup;
mod single;
mod slow;
mod soak;
mod throughput;

use std::time::Duration;

use clap::Parser;

fn main() {
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let args = args::Args::parse();
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
    let runs = args.runs();
    if !args.no_header {
        println!("{}", report::header());
    }
    let ok = match runs[..] {
        // One scenario: run it here, on a fresh System, engine and database.
        [(backend, scenario)] => run(backend, scenario, &args).unwrap_or_else(|e| {
            println!("FAIL {scenario} {backend}: {e:#}");
            false
        }),
        // Several: each in a process of its own, so that each peak RSS is its own.
        _ => runs.iter().fold(true, |ok, (backend, scenario)| {
            let status = std::env::current_exe().and_then(|exe| {
                let args = std::env::args().skip(1).chain(
                    ["--backend", backend, "--scenario", scenario, "--no-header"].map(String::from),
                );
                std::process::Command::new(exe).args(args).status()
            });
            ok & status.is_ok_and(|s| s.success())
        }),
    };
    std::process::exit(if ok { 0 } else { 1 });
}

/// Runs one scenario and prints its rows; false if a delivery is missing or
/// came twice.
fn run(backend: &str, scenario: &str, args: &args::Args) -> anyhow::Result<bool> {
    let system = || actix_rt::System::new();
    match scenario {
        "throughput" => system().block_on(throughput::run(backend, args)),
        "steady" => system().block_on(paced::run(backend, args, 1)),
        "paced" => system().block_on(paced::run(backend, args, args.endpoints)),
        "single" => system().block_on(single::run(backend, args)),
        "many" => system().block_on(many::run(backend, args)),
        "footprint" => system().block_on(footprint::run(backend, args)),
        "soak" => system().block_on(soak::run(backend, args)),
        "ordered" => system().block_on(ordered::run(backend, args)),
        _ => slow::run(backend, args),
    }
}
