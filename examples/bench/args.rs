//! The command line: which scenarios on which backends, and the size of each.

use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "Drive events through hookd into a local receiver and measure it")]
#[command(args_override_self = true)]
pub struct Args {
    #[arg(long, default_value = "both", value_parser = ["sqlite", "postgres", "both"])]
    pub backend: String,
    /// `both` is throughput and steady; `steady` is `paced` to one endpoint.
    #[arg(long, default_value = "both",
          value_parser = ["throughput", "steady", "paced", "single", "footprint", "slow", "many", "soak", "ordered", "both"])]
    pub scenario: String,
    /// Throughput, single, footprint, slow: events to publish, each to every endpoint.
    #[arg(long, default_value_t = 20_000)]
    pub events: usize,
    /// Throughput, single, slow, paced: endpoints (steady: always 1).
    #[arg(long, default_value_t = 10)]
    pub endpoints: usize,
    /// Throughput, slow: events per POST.
    #[arg(long, default_value_t = 500)]
    pub batch: usize,
    /// POSTs in flight at once (default: 4 for throughput and slow, 16 for single).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Steady, paced, soak: events per second (one event per POST; soak:
    /// 200 unless given).
    #[arg(long)]
    pub rate: Option<u32>,
    /// Soak: minutes to run for.
    #[arg(long, default_value_t = 30)]
    pub minutes: usize,
    /// Steady, paced: seconds to publish for.
    #[arg(long, default_value_t = 10)]
    pub seconds: u32,
    /// Many: partners, each with --per-partner endpoints.
    #[arg(long, default_value_t = 100)]
    pub partners: usize,
    /// Many: endpoints of each partner.
    #[arg(long, default_value_t = 100)]
    pub per_partner: usize,
    /// Many: rounds of one event per partner.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Slow: delivery.request_timeout in seconds; the stalled endpoint holds
    /// each request longer than this.
    #[arg(long, default_value_t = 2)]
    pub timeout_secs: u64,
    /// Print rows only, without the table's header (for runs the bench
    /// starts itself, one scenario each).
    #[arg(long, hide = true)]
    pub no_header: bool,
    /// Keep the SQLite file and print where it is.
    #[arg(long)]
    pub keep_db: bool,
    /// Give up when no delivery arrives for this many seconds.
    #[arg(long, default_value_t = 60)]
    pub stall_secs: u64,
    /// Cluster: run 1 to N real `hookd serve` processes on one PostgreSQL.
    #[arg(long)]
    pub instances: Option<usize>,
    /// Cluster: each endpoint's concurrency cap.
    #[arg(long, default_value_t = 2)]
    pub cap: u32,
    /// Cluster: how long the receiver takes to answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub delay_ms: u64,
    /// Ordered: how many subjects the events are about.
    #[arg(long, default_value_t = 1000)]
    pub subjects: usize,
    /// Ordered: the endpoint's ordering, `subject` or `none` (to compare).
    #[arg(long, default_value = "subject", value_parser = ["subject", "none"])]
    pub ordering: String,
    /// Cluster: cluster.lease_ttl in seconds.
    #[arg(long, default_value_t = 15)]
    pub lease_ttl: u64,
}

impl Args {
    /// The (backend, scenario) pairs the command line asks for, in run order.
    pub fn runs(&self) -> Vec<(&'static str, &'static str)> {
        let scenarios: &[&'static str] = match self.scenario.as_str() {
            "both" => &["throughput", "steady"],
            "throughput" => &["throughput"],
            "steady" => &["steady"],
            "paced" => &["paced"],
            "single" => &["single"],
            "footprint" => &["footprint"],
            "slow" => &["slow"],
            "soak" => &["soak"],
            "ordered" => &["ordered"],
            _ => &["many"],
        };
        let backends: &[&'static str] = match self.backend.as_str() {
            "both" => &["sqlite", "postgres"],
            "sqlite" => &["sqlite"],
            _ => &["postgres"],
        };
        backends
            .iter()
            .flat_map(|b| scenarios.iter().map(move |s| (*b, *s)))
            .collect()
    }
}
