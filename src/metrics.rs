//! What hookd counts, exported at `GET /metrics` in the OpenMetrics text
//! format. Counters and histograms are updated where things happen (one call
//! per delivery outcome, beside its log line); gauges of state (backlog,
//! outbox lag, actors) are set from the database and the actors when scraped.

use std::{sync::atomic::AtomicU64, time::Duration};

use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

use crate::domain::{
    filter::FilterReason,
    hand_back::HandBack,
    outcome::{ErrorCategory, Outcome},
    subscription::Unqualified,
};

/// The content type of [`Metrics::render`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AttemptLabels {
    /// `delivered`, `failed` or `gone`.
    pub result: &'static str,
    /// The error category (`none` for a delivered attempt).
    pub category: &'static str,
    /// `scheduled` or `manual`.
    pub trigger: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    pub status: &'static str,
}

/// One endpoint, named for an alert: bounded by the endpoints failing now
/// (at most `FAILING_SERIES` of them).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EndpointLabels {
    pub endpoint: String,
    pub partner: String,
}

/// The most `hookd_endpoint_failing_seconds` series a scrape carries: the
/// longest-failing endpoints (`hookd_endpoints{status="failing"}` counts all).
pub const FAILING_SERIES: u64 = 100;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabels {
    pub state: &'static str,
}

/// Every metric hookd exports. Cheap to update from any thread.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub events_ingested: Counter,
    /// Group commits of fresh events (see `delivery::committer`).
    pub ingest_commits: Counter,
    pub deliveries_created: Counter,
    pub deliveries_dead: Counter,
    /// Deliveries dead now (set when scraped): the dead-letter backlog.
    pub dead_now: Gauge,
    /// Deliveries paused now: held by a disabled endpoint (set when scraped).
    pub paused_now: Gauge,
    /// Endpoints by status (set when scraped).
    pub endpoints: Family<StatusLabels, Gauge>,
    /// Each failing endpoint, how long it has failed (set when scraped).
    pub endpoint_failing: Family<EndpointLabels, Gauge<f64, AtomicU64>>,
    /// Endpoints hookd disabled itself (failing too long, or 410 Gone).
    pub endpoints_disabled: Counter,
    /// From a delivery's creation (its event's fanout) to the 2xx, for
    /// scheduled attempts.
    pub delivery_latency: Histogram,
    /// Deliveries waiting on their last two scheduled attempts (set when scraped).
    pub retry_saturation: Gauge,
    /// Events the fanout refused: written around the API, they fail the catalog.
    pub events_rejected: Counter,
    /// Deliveries closed before an attempt because they no longer qualify.
    pub deliveries_cancelled: Family<ReasonLabels, Counter>,
    /// Deliveries an endpoint actor gave back to the database unattempted.
    pub deliveries_handed_back: Family<ReasonLabels, Counter>,
    /// Endpoints whose actors claim their work in the database's order
    /// (fresh events waiting as rows behind older ones; set when scraped).
    pub endpoints_oldest_first: Gauge,
    /// Deliveries not created: the event did not pass the endpoint's filter.
    pub deliveries_filtered: Family<ReasonLabels, Counter>,
    pub attempts: Family<AttemptLabels, Counter>,
    pub attempt_seconds: Histogram,
    /// Deliveries waiting, by state (set when scraped).
    pub backlog: Family<StateLabels, Gauge>,
    /// Committed events not yet fanned out, and the age of the oldest.
    pub outbox_unpublished: Gauge,
    pub outbox_oldest_seconds: Gauge<f64, AtomicU64>,
    /// Endpoint actors running, their open circuits and requests in flight.
    pub endpoint_actors: Gauge,
    pub circuits_open: Gauge,
    pub requests_in_flight: Gauge,
    /// The outbound connection budget: places held, its size, actors in line.
    pub connections_held: Gauge,
    pub connections_max: Gauge,
    pub connections_waiting: Gauge,
    /// Attempts answered whose records are not yet committed.
    pub attempts_unrecorded: Gauge,
    /// Endpoint health sweeps finished (see `delivery::health_sweep`).
    pub health_sweeps: Counter,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("hookd");
        let m = Metrics {
            events_ingested: Counter::default(),
            ingest_commits: Counter::default(),
            deliveries_created: Counter::default(),
            deliveries_dead: Counter::default(),
            events_rejected: Counter::default(),
            dead_now: Gauge::default(),
            paused_now: Gauge::default(),
            endpoints: Family::default(),
            endpoint_failing: Family::default(),
            endpoints_disabled: Counter::default(),
            // 1 ms to about 9 minutes; a delivery that needed retries lands above.
            delivery_latency: Histogram::new(exponential_buckets(0.001, 2.0, 20)),
            retry_saturation: Gauge::default(),
            deliveries_cancelled: Family::default(),
            deliveries_filtered: Family::default(),
            deliveries_handed_back: Family::default(),
            endpoints_oldest_first: Gauge::default(),
            attempts: Family::default(),
            // 5 ms to about 41 s.
            attempt_seconds: Histogram::new(exponential_buckets(0.005, 2.0, 14)),
            backlog: Family::default(),
            outbox_unpublished: Gauge::default(),
            outbox_oldest_seconds: Gauge::default(),
            endpoint_actors: Gauge::default(),
            circuits_open: Gauge::default(),
            requests_in_flight: Gauge::default(),
            connections_held: Gauge::default(),
            connections_max: Gauge::default(),
            connections_waiting: Gauge::default(),
            attempts_unrecorded: Gauge::default(),
            health_sweeps: Counter::default(),
            registry: Registry::default(),
        };
        registry.register(
            "events_ingested",
            "Events accepted into the outbox through the API",
            m.events_ingested.clone(),
        );
        registry.register(
            "ingest_commits",
            "Transactions that stored fresh events, each for every request that waited (group commit)",
            m.ingest_commits.clone(),
        );
        registry.register(
            "deliveries_created",
            "Deliveries created by the fanout",
            m.deliveries_created.clone(),
        );
        registry.register(
            "deliveries_died",
            "Deliveries that ran out of attempts or age (hookd_deliveries_dead is how many are dead now)",
            m.deliveries_dead.clone(),
        );
        registry.register(
            "deliveries_dead",
            "Deliveries dead now: the dead-letter backlog, replayable within the replay window",
            m.dead_now.clone(),
        );
        registry.register(
            "deliveries_paused",
            "Deliveries paused now: held by a disabled endpoint; enabling it resumes them (not counted as waiting)",
            m.paused_now.clone(),
        );
        registry.register(
            "endpoints",
            "Endpoints by status: active (succeeding), failing (active, failing since the last success), paused, disabled",
            m.endpoints.clone(),
        );
        registry.register(
            "endpoint_failing_seconds",
            "Seconds since each failing endpoint last succeeded (its failing_since), by endpoint and partner: the 100 longest-failing",
            m.endpoint_failing.clone(),
        );
        registry.register(
            "endpoints_disabled",
            "Endpoints hookd disabled itself: failing past delivery's disable threshold, or answering 410 Gone",
            m.endpoints_disabled.clone(),
        );
        registry.register(
            "delivery_latency_seconds",
            "From a delivery's creation (its event's fanout, at commit on the fast path) to the receiver's 2xx, scheduled attempts only",
            m.delivery_latency.clone(),
        );
        registry.register(
            "retry_saturation",
            "Deliveries waiting on their last two scheduled attempts",
            m.retry_saturation.clone(),
        );
        registry.register(
            "events_rejected",
            "Events written around the API (plain SQL) that fail the event catalog: never delivered, listed by GET /v1/admin/events?state=rejected",
            m.events_rejected.clone(),
        );
        registry.register(
            "deliveries_cancelled",
            "Deliveries closed without an attempt because they no longer qualify (the endpoint stopped subscribing to the type, or belongs to another partner), by reason",
            m.deliveries_cancelled.clone(),
        );
        registry.register(
            "deliveries_filtered",
            "Deliveries not created because the event did not pass the endpoint's filter, by reason (no_match, missing_field, not_comparable)",
            m.deliveries_filtered.clone(),
        );
        registry.register(
            "attempts",
            "Delivery attempts by result, error category and trigger",
            m.attempts.clone(),
        );
        registry.register(
            "attempt_duration_seconds",
            "Time from sending a request to its recorded outcome",
            m.attempt_seconds.clone(),
        );
        registry.register(
            "deliveries_waiting",
            "Deliveries not yet finished, by state",
            m.backlog.clone(),
        );
        registry.register(
            "outbox_unpublished",
            "Committed events not yet fanned out",
            m.outbox_unpublished.clone(),
        );
        registry.register(
            "outbox_oldest_unpublished_seconds",
            "Age of the oldest event not yet fanned out",
            m.outbox_oldest_seconds.clone(),
        );
        registry.register(
            "endpoint_actors",
            "Endpoint actors running",
            m.endpoint_actors.clone(),
        );
        registry.register(
            "circuits_open",
            "Endpoint actors whose circuit is open or half open",
            m.circuits_open.clone(),
        );
        registry.register(
            "requests_in_flight",
            "Delivery requests on the wire (sent, not yet answered)",
            m.requests_in_flight.clone(),
        );
        registry.register(
            "outbound_connections",
            "Places held in the outbound connection budget (sockets open or allowed)",
            m.connections_held.clone(),
        );
        registry.register(
            "outbound_connections_max",
            "Size of the outbound connection budget (delivery.max_connections)",
            m.connections_max.clone(),
        );
        registry.register(
            "outbound_connection_waiters",
            "Endpoint actors waiting in line for a place in the connection budget",
            m.connections_waiting.clone(),
        );
        registry.register(
            "health_sweeps",
            "Endpoint health sweeps finished",
            m.health_sweeps.clone(),
        );
        registry.register(
            "deliveries_handed_back",
            "Deliveries an endpoint actor gave back to the database unattempted, by why",
            m.deliveries_handed_back.clone(),
        );
        registry.register(
            "endpoints_oldest_first",
            "Endpoints whose fresh events wait as rows behind older ones, claimed oldest first",
            m.endpoints_oldest_first.clone(),
        );
        registry.register(
            "attempts_unrecorded",
            "Attempts answered whose records are not yet committed",
            m.attempts_unrecorded.clone(),
        );
        m.start_known_series_at_zero();
        Metrics { registry, ..m }
    }

    /// Creates every series the counter families can have at 0, so that a
    /// scrape shows them before their first event and `rate()` or
    /// `increase()` see the first one (a series that appears at 1 loses it).
    fn start_known_series_at_zero(&self) {
        for reason in Unqualified::ALL {
            drop(self.deliveries_cancelled.get_or_create(&ReasonLabels {
                reason: reason.reason(),
            }));
        }
        for why in HandBack::ALL {
            drop(self.deliveries_handed_back.get_or_create(&ReasonLabels {
                reason: why.as_str(),
            }));
        }
        for reason in FilterReason::ALL {
            drop(self.deliveries_filtered.get_or_create(&ReasonLabels {
                reason: reason.as_str(),
            }));
        }
        let results = [("delivered", "none"), ("gone", "http_status")]
            .into_iter()
            .chain(ErrorCategory::ALL.map(|c| ("failed", c.as_str())));
        for (result, category) in results {
            for trigger in ["scheduled", "manual"] {
                drop(self.attempts.get_or_create(&AttemptLabels {
                    result,
                    category,
                    trigger,
                }));
            }
        }
    }

    /// Counts the deliveries a fanout left out, by the filters' reasons.
    pub fn deliveries_filtered(&self, filtered: &std::collections::BTreeMap<FilterReason, usize>) {
        for (reason, n) in filtered {
            self.deliveries_filtered
                .get_or_create(&ReasonLabels {
                    reason: reason.as_str(),
                })
                .inc_by(*n as u64);
        }
    }

    /// Counts `n` deliveries handed back unattempted.
    pub fn handed_back(&self, why: HandBack, n: usize) {
        self.deliveries_handed_back
            .get_or_create(&ReasonLabels {
                reason: why.as_str(),
            })
            .inc_by(n as u64);
    }

    /// Counts a delivery cancelled before its attempt.
    pub fn delivery_cancelled(&self, reason: &'static str) {
        self.deliveries_cancelled
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// Counts one finished attempt; `dead` when it ended the delivery.
    pub fn attempt(&self, outcome: &Outcome, latency: Duration, manual: bool, dead: bool) {
        let (result, category) = match outcome {
            Outcome::Delivered => ("delivered", "none"),
            Outcome::Gone => ("gone", "http_status"),
            Outcome::Failed { category, .. } => ("failed", category.as_str()),
        };
        let trigger = if manual { "manual" } else { "scheduled" };
        self.attempts
            .get_or_create(&AttemptLabels {
                result,
                category,
                trigger,
            })
            .inc();
        self.attempt_seconds.observe(latency.as_secs_f64());
        if dead {
            self.deliveries_dead.inc();
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::outcome::ErrorCategory;

    #[test]
    fn every_attempt_cancellation_and_hand_back_series_is_shown_at_zero_before_its_first_event() {
        let text = Metrics::new().render();
        for series in [
            r#"hookd_attempts_total{result="delivered",category="none",trigger="scheduled"} 0"#,
            r#"hookd_attempts_total{result="gone",category="http_status",trigger="manual"} 0"#,
            r#"hookd_attempts_total{result="failed",category="body_too_large",trigger="scheduled"} 0"#,
            r#"hookd_attempts_total{result="failed",category="proxy",trigger="manual"} 0"#,
            r#"hookd_deliveries_cancelled_total{reason="endpoint-unsubscribed"} 0"#,
            r#"hookd_deliveries_cancelled_total{reason="endpoint-of-another-partner"} 0"#,
            r#"hookd_deliveries_handed_back_total{reason="beyond-claim"} 0"#,
            r#"hookd_deliveries_handed_back_total{reason="lease-lost"} 0"#,
        ] {
            assert!(text.contains(series), "{series} in {text}");
        }
        let attempt_series = text
            .lines()
            .filter(|l| l.starts_with("hookd_attempts_total{"))
            .count();
        assert_eq!(
            attempt_series,
            (2 + ErrorCategory::ALL.len()) * 2,
            "(1 delivered + 1 gone + one failed per category) x 2 triggers"
        );
    }

    #[test]
    fn an_attempt_is_counted_by_result_category_and_trigger() {
        let m = Metrics::new();
        m.attempt(&Outcome::Delivered, Duration::from_millis(12), false, false);
        let failed = Outcome::Failed {
            category: ErrorCategory::Timeout,
            retry_after: None,
        };
        m.attempt(&failed, Duration::from_secs(10), true, true);
        let text = m.render();
        assert!(
            text.contains(
                r#"hookd_attempts_total{result="delivered",category="none",trigger="scheduled"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"hookd_attempts_total{result="failed",category="timeout",trigger="manual"} 1"#
            ),
            "{text}"
        );
        assert!(text.contains("hookd_deliveries_died_total 1"), "{text}");
        assert!(
            text.contains("hookd_attempt_duration_seconds_count 2"),
            "{text}"
        );
        assert!(
            text.ends_with("# EOF\n"),
            "OpenMetrics ends with # EOF: {text}"
        );
    }
}
