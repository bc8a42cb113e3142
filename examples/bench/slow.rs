//! `--scenario slow`: one endpoint of several stalls every request until
//! hookd's request timeout. Runs the same load twice, all endpoints healthy
//! and then with endpoint 0 stalled, and reports the other endpoints'
//! throughput in the second run as a share of the first: how well one bad
//! endpoint is kept from slowing the rest.

use std::time::Duration;

use crate::args::Args;
use crate::inproc::{self, Outcome};
use crate::load::Load;
use crate::receiver::Plan;
use crate::report::{per_sec, row, verdict};

/// Runs the healthy and the stalled run, each on a System of its own.
pub fn run(backend: &str, args: &Args) -> anyhow::Result<bool> {
    let one = |stalled| actix_rt::System::new().block_on(run_one(backend, args, stalled));
    let (Some(healthy), Some(slow)) = (one(None)?, one(Some(0))?) else {
        return Ok(true);
    };
    let (endpoints, timeout) = (args.endpoints, args.timeout_secs);
    // Per healthy endpoint, so that 10 healthy endpoints compare with 9.
    let rate = |o: &Outcome| {
        let span = o
            .report
            .last_receipt()
            .map_or(Duration::ZERO, |t| t - o.ingest.first_send);
        o.report.received as f64 / o.healthy.max(1) as f64 / span.as_secs_f64().max(1e-9)
    };
    let (base, stalled) = (rate(&healthy), rate(&slow));
    let (counts, ok_slow) = slow.report.check();
    let (base_counts, ok_base) = healthy.report.check();
    let figures = format!(
        "deliveries per healthy endpoint {}/s with endpoint 0 stalled vs {}/s all healthy \
         = {:.2}; the stalled endpoint held {} requests; {counts} (all-healthy run: {base_counts})",
        per_sec(stalled.round() as usize, Duration::from_secs(1)),
        per_sec(base.round() as usize, Duration::from_secs(1)),
        stalled / base.max(1e-9),
        slow.held,
    );
    let conditions = format!(
        "{} events x {endpoints} endpoints (endpoint 0 holds every request {} s unanswered), \
         {}/POST, {} POSTs in flight, delivery.request_timeout {timeout} s",
        args.events,
        2 * timeout + 1,
        args.batch,
        args.concurrency.unwrap_or(4),
    );
    row("slow", backend, &figures, &conditions);
    healthy.print_details("all healthy: ");
    slow.print_details("endpoint 0 stalled: ");
    let problems = [healthy.report.problems, slow.report.problems].concat();
    Ok(verdict("slow", backend, ok_base && ok_slow, &problems))
}

/// One run, endpoint `stalled` holding every request past the timeout.
async fn run_one(
    backend: &str,
    args: &Args,
    stalled: Option<usize>,
) -> anyhow::Result<Option<Outcome>> {
    let timeout = Duration::from_secs(args.timeout_secs);
    let plan = Plan {
        endpoints: args.endpoints,
        ports: args.endpoints,
        stalled,
        hold: 2 * timeout + Duration::from_secs(1),
    };
    let load = Load {
        subjects: 0,
        ordered: false,
        events: args.events,
        batch: args.batch,
        in_flight: args.concurrency.unwrap_or(4),
        pace: Duration::ZERO,
    };
    let timeout = format!("{}s", args.timeout_secs);
    let env = [("HOOKD_DELIVERY__REQUEST_TIMEOUT", timeout.as_str())];
    let stall = Duration::from_secs(args.stall_secs);
    inproc::run(backend, args.keep_db, stall, plan, &env, load).await
}
