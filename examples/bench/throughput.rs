//! `--scenario throughput`: batches of events as fast as hookd takes them,
//! each event to every endpoint.

use std::time::Duration;

use crate::args::Args;
use crate::inproc;
use crate::load::Load;

pub async fn run(backend: &str, args: &Args) -> anyhow::Result<bool> {
    let (events, endpoints, batch) = (args.events, args.endpoints, args.batch);
    let in_flight = args.concurrency.unwrap_or(4);
    let load = Load {
        subjects: 0,
        ordered: false,
        events,
        batch,
        in_flight,
        pace: Duration::ZERO,
    };
    let Some(outcome) = inproc::run_healthy(backend, args, endpoints, load).await? else {
        return Ok(true);
    };
    let conditions = format!(
        "{events} events x {endpoints} endpoints, {batch}/POST, {in_flight} POSTs in flight"
    );
    Ok(outcome.print("throughput", backend, &conditions))
}
