//! The overview: the cluster's totals, the charts of the last hour and the
//! last 24 hours, the instances, and the endpoints with the most waiting.

use maud::{Markup, html};

use super::{Nav, circuit_badge, href, page};
use crate::{
    dashboard::charts::{self, Chart, Series, Unit},
    http::observe::{Actors, EndpointHealth},
    store::{
        backlog::{Stuck, Waiting},
        charts::{AttemptCounts, Buckets, Latencies},
        samples::Sample,
    },
};

/// The cluster's totals, read from the database.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Endpoints by status: active, failing, paused, disabled.
    pub endpoints: [(&'static str, i64); 4],
    pub waiting: Waiting,
    pub stuck: Stuck,
    /// Age of the oldest unpublished event.
    pub outbox_age_ms: Option<i64>,
}

/// What the charts of one period draw.
#[derive(Debug, Clone)]
pub struct Window {
    pub buckets: Buckets,
    pub attempts: AttemptCounts,
    pub latencies: Latencies,
    /// The backlog samples of the period, oldest first.
    pub samples: Vec<Sample>,
}

/// The periods the overview charts: the last hour by minute, the last 24
/// hours by 15 minutes.
#[derive(Debug, Clone)]
pub struct Periods {
    pub hour: Window,
    pub day: Window,
}

/// A value per bucket from the samples in it: the highest, so a spike
/// within 15 minutes still shows; `None` where no sample was taken.
pub fn per_bucket(
    samples: &[Sample],
    b: Buckets,
    value: impl Fn(&Sample) -> i64,
) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = vec![None; b.count];
    for s in samples {
        if let Some(slot) = b.index(s.minute).and_then(|i| out.get_mut(i)) {
            let v = value(s) as f64;
            *slot = Some(slot.map_or(v, |old| old.max(v)));
        }
    }
    out
}

/// How many deliveries of one state a sample counts.
type StateCount = fn(&Sample) -> i64;

fn some(values: &[i64]) -> Vec<Option<f64>> {
    values.iter().map(|v| Some(*v as f64)).collect()
}

fn ms(values: &[Option<i64>]) -> Vec<Option<f64>> {
    values.iter().map(|v| v.map(|v| v as f64)).collect()
}

fn series<'a>(name: &'a str, color: &'a str, values: Vec<Option<f64>>) -> Series<'a> {
    Series {
        name,
        class: name,
        color,
        values,
    }
}

/// The four charts of one period, in the order the page shows them:
/// attempts by result (bars), latency, outbox age and waiting deliveries
/// by state (lines).
fn window_charts(w: &Window, day: bool) -> Vec<Markup> {
    let b = w.buckets;
    let (key, per, period) = if day {
        ("day", "15 minutes", "last 24 hours")
    } else {
        ("hour", "minute", "last hour")
    };
    let by_state: [(&str, &str, StateCount); 5] = [
        ("pending", "#2563eb", |s| s.pending),
        ("failed", "#dc2626", |s| s.failed),
        ("delivering", "#16a34a", |s| s.delivering),
        ("paused", "#a16207", |s| s.paused),
        ("dead", "#111827", |s| s.dead),
    ];
    let age = |s: &Sample| s.outbox_age_ms.unwrap_or(0);
    // (name, title, value axis, unit, series)
    let specs = [
        (
            "attempts",
            format!("Attempts per {per} by result"),
            format!("attempts per {per}"),
            Unit::Count,
            vec![
                series("delivered", "#16a34a", some(&w.attempts.delivered)),
                series("failed", "#dc2626", some(&w.attempts.failed)),
            ],
        ),
        (
            "latency",
            format!("Event-to-delivery latency (p50, p99) per {per}"),
            "latency".into(),
            Unit::Millis,
            vec![
                series("p50", "#2563eb", ms(&w.latencies.p50)),
                series("p99", "#7c3aed", ms(&w.latencies.p99)),
            ],
        ),
        (
            "outbox",
            "Outbox age (oldest unpublished event)".into(),
            "age".into(),
            Unit::Millis,
            vec![series("oldest", "#ea580c", per_bucket(&w.samples, b, age))],
        ),
        (
            "waiting",
            "Waiting deliveries by state".into(),
            "deliveries".into(),
            Unit::Count,
            by_state
                .iter()
                .map(|(name, color, f)| series(name, color, per_bucket(&w.samples, b, f)))
                .collect(),
        ),
    ];
    specs
        .into_iter()
        .map(|(name, what, y_label, unit, series)| {
            let (id, title) = (format!("chart-{name}-{key}"), format!("{what}, {period}"));
            let chart = Chart {
                id: &id,
                title: &title,
                y_label: &y_label,
                unit,
                buckets: b,
                series,
            };
            if name == "attempts" {
                charts::stacked_bars(&chart)
            } else {
                charts::lines(&chart)
            }
        })
        .collect()
}

fn card(id: &str, n: i64, what: &str, link: Option<String>) -> Markup {
    html! {
        div.card id=(id) {
            b { (n) }
            @match link {
                Some(l) => { a href=(l) { (what) } }
                None => { (what) }
            }
        }
    }
}

fn totals(actors: &Actors, t: &Totals) -> Markup {
    let alive = actors.instances.iter().filter(|i| i.alive).count();
    html! {
        h2 { "Endpoints" }
        div.cards #endpoint-totals {
            @for (status, n) in t.endpoints {
                (card(&format!("endpoints-{status}"), n, status,
                    Some(format!("/dashboard/endpoints?status={status}"))))
            }
        }
        h2 { "Deliveries" }
        div.cards {
            (card("pending", t.waiting.pending, "deliveries pending", None))
            (card("failed", t.waiting.failed, "waiting to retry", None))
            (card("delivering", t.waiting.delivering, "being delivered", None))
            (card("paused", t.stuck.paused, "paused (endpoint disabled)", None))
            (card("dead", t.stuck.dead, "dead", Some("/dashboard/search?state=dead".into())))
            (card("saturated", t.stuck.saturated, "on their last two attempts", None))
        }
        h2 { "Cluster" }
        div.cards {
            div.card #outbox { b { (actors.outbox_unpublished) } "events waiting for fanout"
                @if let Some(age) = t.outbox_age_ms { br; small { "oldest " (Unit::Millis.format(age as f64)) " old" } } }
            div.card #instance-count { b { (alive) } "instances alive" }
            div.card #actors-running { b { (actors.running_in_cluster) } "endpoint actors running"
                br; small { (actors.running) " in this instance" } }
        }
    }
}

/// Every instance of the cluster on this database.
fn instances_table(actors: &Actors) -> Markup {
    html! {
        table #instances {
            thead { tr {
                th { "Instance" } th { "Host" } th { "Listen" } th { "Started" }
                th { "Heartbeat" } th { "Endpoints" } th { "Actors" } th { "In flight" }
            } }
            tbody {
                @for i in &actors.instances {
                    tr data-instance=(i.id) class=(if i.alive { "alive" } else { "dead" }) {
                        td { code { (i.id) } @if i.id == actors.instance_id { " (this one)" } }
                        td { (i.host) " · pid " (i.pid) }
                        td { code { (i.listen) } }
                        td { (i.started_at) }
                        td.num.heartbeat {
                            (format!("{:.1} s ago", i.heartbeat_age_ms as f64 / 1000.0))
                            @if !i.alive { " (dead)" } @else if i.draining { " (stopping)" }
                        }
                        td.num.owned { (i.endpoints_owned) }
                        td.num { (i.actors) }
                        td.num { (i.in_flight) }
                    }
                }
            }
        }
    }
}

fn endpoint_row(e: &EndpointHealth) -> Markup {
    html! {
        tr data-endpoint=(e.endpoint_id) {
            td { a href=(href("/dashboard/endpoints", &e.endpoint_id)) { code { (e.endpoint_id) } } }
            td { code { (e.partner_id) } }
            td { span class={ "status " (e.status) } { (e.status) } }
            td.num.waiting { (e.waiting) }
            td { (e.next_attempt_at.as_deref().unwrap_or("–")) }
            td {
                (circuit_badge(e.circuit, None))
                @if let Some(until) = &e.open_until { " until " (until) }
            }
            td.num.failures { (e.consecutive_failures) }
            td.num.in-flight { (e.in_flight) }
            td.owner { code { (e.owner.as_deref().unwrap_or("–")) } }
            @match &e.actor {
                Some(a) => {
                    td.num { (a.report.queued) }
                    td.num { (format!("{:.0} ms", a.report.attempt_ms)) }
                }
                None => { td {} td {} }
            }
        }
    }
}

/// The overview: totals, charts, instances, then the endpoints with the
/// most waiting (of one partner when `partner` is given).
pub fn overview(actors: &Actors, t: &Totals, periods: &Periods, partner: Option<&str>) -> Markup {
    let hour = window_charts(&periods.hour, false);
    let day = window_charts(&periods.day, true);
    page(
        "Overview",
        Nav::Overview,
        Some(15),
        html! {
            (totals(actors, t))
            h2 { "The last hour and the last 24 hours" }
            div.charts #charts {
                @for (h, d) in hour.iter().zip(day.iter()) {
                    figure { (h) } figure { (d) }
                }
            }
            h2 { "Instances" }
            (instances_table(actors))
            h2 { "Endpoints with the most waiting" }
            form.filters method="get" action="/dashboard" {
                label for="partner_id" { "Partner" input id="partner_id" name="partner_id" value=[partner]; }
                button type="submit" { "Filter" }
                a href="/dashboard/endpoints" { "All endpoints, filtered and sorted →" }
            }
            table #endpoints {
                thead { tr {
                    th { "Endpoint" } th { "Partner" } th { "Status" } th { "Waiting" }
                    th { "Next attempt" } th { "Circuit" } th { "Failures" }
                    th { "In flight" } th { "Owner" } th { "Queued here" } th { "Avg attempt" }
                } }
                tbody {
                    @for e in &actors.data { (endpoint_row(e)) }
                    @if actors.data.is_empty() { tr { td colspan="11" { "No endpoints." } } }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_window(b: Buckets) -> Window {
        Window {
            buckets: b,
            attempts: AttemptCounts {
                delivered: vec![0; b.count],
                failed: vec![0; b.count],
            },
            latencies: Latencies {
                p50: vec![None; b.count],
                p99: vec![None; b.count],
            },
            samples: Vec::new(),
        }
    }

    #[test]
    fn samples_fall_in_their_buckets_and_the_highest_counts() {
        let b = Buckets {
            start_ms: 0,
            step_ms: 900_000,
            count: 3,
        };
        let at = |minute, pending| Sample {
            minute,
            pending,
            ..Sample::default()
        };
        let samples = [
            at(0, 4),
            at(60_000, 9),
            at(120_000, 2),
            at(1_800_000, 0),
            at(9_000_000, 7),
        ];
        assert_eq!(
            per_bucket(&samples, b, |s| s.pending),
            vec![Some(9.0), None, Some(0.0)],
            "bucket 1 had no sample; one past the end is left out"
        );
    }

    #[test]
    fn values_from_the_database_are_escaped() {
        let actors = Actors {
            instance_id: "ins_1".into(),
            running: 0,
            running_in_cluster: 0,
            instances: Vec::new(),
            outbox_unpublished: 0,
            oldest_unpublished_at: None,
            data: vec![EndpointHealth {
                endpoint_id: "ep_<script>alert(1)</script>".into(),
                partner_id: "ptn_\"onmouseover=x".into(),
                status: "active".into(),
                waiting: 0,
                next_attempt_at: None,
                in_flight: 0,
                owner: Some("ins_\"<i>".into()),
                circuit: crate::delivery::report::Circuit::Closed,
                consecutive_failures: 0,
                open_until: None,
                actor: None,
            }],
        };
        let b = Buckets::ending_at(0, 60_000, 60);
        let periods = Periods {
            hour: empty_window(b),
            day: empty_window(Buckets::ending_at(0, 900_000, 96)),
        };
        let page = overview(&actors, &Totals::default(), &periods, Some("\"><b>")).into_string();
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(page.contains("ep_&lt;script&gt;"), "{page}");
        assert!(!page.contains("\"onmouseover"), "{page}");
        assert!(
            page.contains(r#"value="&quot;&gt;&lt;b&gt;""#),
            "the filter is echoed escaped: {page}"
        );
        assert_eq!(
            page.matches("<svg").count(),
            8,
            "four charts for each period"
        );
    }
}
