//! `--scenario paced` (and `steady`, which is paced to one endpoint): a fixed
//! rate of events, one per POST, for a number of seconds; the figure to read
//! is the latency from ingest to receipt.

use std::time::Duration;

use crate::args::Args;
use crate::inproc;
use crate::load::Load;

pub async fn run(backend: &str, args: &Args, endpoints: usize) -> anyhow::Result<bool> {
    let (rate, seconds) = (args.rate.unwrap_or(500).max(1), args.seconds);
    let load = Load {
        subjects: 0,
        ordered: false,
        events: (rate * seconds) as usize,
        batch: 1,
        in_flight: 1024,
        pace: Duration::from_secs(1) / rate,
    };
    let Some(outcome) = inproc::run_healthy(backend, args, endpoints, load).await? else {
        return Ok(true);
    };
    let conditions = format!("{rate} ev/s for {seconds} s x {endpoints} endpoint(s), 1 event/POST");
    Ok(outcome.print("paced", backend, &conditions))
}
