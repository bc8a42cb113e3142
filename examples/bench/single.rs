//! `--scenario single`: one event per POST, many POSTs in flight, as a
//! producer without batching sends them. Besides the overall rate it splits
//! deliveries into those made while ingest still ran and those after, which
//! shows whether delivery keeps up with ingest or catches up later.

use crate::args::Args;
use crate::inproc;
use crate::load::Load;
use crate::report::{per_sec, row, secs, verdict};

pub async fn run(backend: &str, args: &Args) -> anyhow::Result<bool> {
    let (events, endpoints) = (args.events, args.endpoints);
    let in_flight = args.concurrency.unwrap_or(16);
    let load = Load::one_per_post(events, in_flight);
    let Some(o) = inproc::run_healthy(backend, args, endpoints, load).await? else {
        return Ok(true);
    };
    let (start, ended) = (o.ingest.first_send, o.ingest.ended());
    let last = o.report.last_receipt().unwrap_or(ended).max(ended);
    let during = o.report.receipts.partition_point(|t| *t <= ended);
    let after = o.report.receipts.len() - during;
    let (counts, ok) = o.report.check();
    let figures = format!(
        "ingest {} ev/s, deliveries {}/s; while ingest ran {}/s ({during} in {}), after it {}/s \
         ({after} in {}); {}, peak RSS {} MiB (whole process), {}, {counts}",
        per_sec(events, o.ingest.elapsed),
        o.delivery_rate(),
        per_sec(during, ended - start),
        secs(ended - start),
        per_sec(after, last - ended),
        secs(last - ended),
        o.latency(),
        o.rss_mib,
        o.cost.describe(o.report.received),
    );
    let conditions = format!(
        "{events} events x {endpoints} endpoint(s), 1 event/POST, {in_flight} POSTs in flight"
    );
    row("single", backend, &figures, &conditions);
    o.print_details("");
    Ok(verdict("single", backend, ok, &o.report.problems))
}
