//! The overview: the cluster's totals (one partner's when filtered to it),
//! the charts of the last hour and the last 24 hours, the instances, and
//! the endpoints with the most waiting.

use std::collections::HashMap;

use maud::{Markup, html};

use super::{Nav, badges, cards, href, page, when::when_text, with_query};
use crate::{
    dashboard::{
        charts::{self, Chart, Series, Unit},
        health,
        reads::{attempts::Measured, totals::Totals},
    },
    http::observe::{Actors, EndpointHealth},
    store::{
        charts::{AttemptCounts, Buckets, Latencies},
        samples::Sample,
    },
};

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

/// Everything the overview shows.
pub struct OverviewView<'a> {
    pub actors: &'a Actors,
    /// The cards' numbers (of `partner` when given).
    pub totals: &'a Totals,
    pub periods: &'a Periods,
    /// The partner the page is filtered to.
    pub partner: Option<&'a str>,
    /// The filter names no partner.
    pub unknown_partner: bool,
    /// The listed endpoints' attempts of the last hour.
    pub measured: &'a HashMap<String, Measured>,
    /// Open incidents (of `partner` when given).
    pub incidents: &'a [crate::http::incidents::IncidentOut],
    pub now_ms: i64,
}

/// The partner filter, first: it decides what the cards count.
fn scope(v: &OverviewView) -> Markup {
    html! {
        form.filters #scope method="get" action="/dashboard" {
            label for="partner_id" { "Partner" input id="partner_id" name="partner_id" value=[v.partner] placeholder="ptn_…"; }
            button type="submit" { "Filter" }
            @if v.partner.is_some() { a href="/dashboard" { "All partners" } }
        }
        @if v.unknown_partner { p.error role="alert" { "There is no partner with this id: every count below is 0." } }
    }
}

fn totals(v: &OverviewView) -> Markup {
    let (actors, partner) = (v.actors, v.partner);
    let alive = actors.instances.iter().filter(|i| i.alive).count();
    html! {
        (cards::heading("Endpoints", partner))
        (cards::endpoint_cards(v.totals, partner))
        (cards::heading("Deliveries", partner))
        (cards::delivery_cards(v.totals, partner, v.now_ms))
        h2 { "Cluster" @if partner.is_some() { " (every partner)" } }
        div.cards {
            div.card #instance-count { b { (alive) } "instances alive" }
            div.card #actors-running { b { (actors.running_in_cluster) } "endpoint actors running"
                br; small { (actors.running) " in this instance" } }
        }
    }
}

/// Every instance of the cluster on this database.
fn instances_table(actors: &Actors, now_ms: i64) -> Markup {
    html! {
        table #instances {
            thead { tr {
                th { "Instance" } th { "Host" } th { "Listen" } th { "Started" }
                th { "Heartbeat" } th { "Endpoints" } th { "Actors" } th { "In flight" }
            } }
            tbody {
                @for i in &actors.instances {
                    tr data-instance=(i.id) class=(if i.alive { "alive" } else { "dead" }) {
                        td { code { (i.id) } @if i.id == actors.instance_id { " (this one)" }
                            @if i.role != "all" { " · " span.role { (i.role) } } }
                        td { (i.host) " · pid " (i.pid) }
                        td { code { (i.listen) } }
                        td { (when_text(now_ms, &i.started_at)) }
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

/// The attempt durations of the last hour, or a dash that says why not.
pub fn avg_attempt(m: Option<&Measured>) -> Markup {
    match m {
        Some(m) => {
            let what = match m.attempts {
                1 => "the one attempt sent in the last hour".to_string(),
                n => format!("the mean of the {n} attempts sent in the last hour"),
            };
            // Durations are stored in whole milliseconds, rounded down.
            let mean = if m.mean_ms < 0.5 {
                "< 1 ms".to_string()
            } else {
                Unit::Millis.format(m.mean_ms)
            };
            html! { span title=(what) { (mean) } }
        }
        None => html! { span title="no attempt was sent in the last hour" { "–" } },
    }
}

fn endpoint_row(e: &EndpointHealth, v: &OverviewView) -> Markup {
    let h = health::of_overview(e, v.now_ms);
    html! {
        tr data-endpoint=(e.endpoint_id) {
            td { a href=(href("/dashboard/endpoints", &e.endpoint_id)) { code { (e.endpoint_id) } } }
            td { code { (e.partner_id) } }
            td { (badges::status(h.status)) }
            td.num.waiting { (e.waiting) }
            td.next-attempt { @match &e.next_attempt_at { Some(t) => (when_text(v.now_ms, t)), None => "–" } }
            td.circuit-cell { (badges::circuit(h.circuit, v.now_ms)) }
            td.num.failures { (h.consecutive_failures) }
            td.num.in-flight { (e.in_flight) }
            td.owner { code { (e.owner.as_deref().unwrap_or("–")) } }
            td.num { (e.actor.as_ref().map_or_else(|| "–".to_string(), |a| a.report.queued.to_string())) }
            td.num.avg-attempt { (avg_attempt(v.measured.get(&e.endpoint_id))) }
        }
    }
}

/// The endpoints with the most waiting, and the way to the whole list.
fn top_endpoints(v: &OverviewView) -> Markup {
    let data = &v.actors.data;
    let mut all = vec![("sort", "backlog")];
    all.extend(v.partner.map(|p| ("partner_id", p)));
    html! {
        h2 { "Endpoints with the most waiting" }
        table #endpoints {
            thead { tr {
                th { "Endpoint" } th { "Partner" } th { "Status" } th { "Waiting" }
                th { "Next attempt" } th { "Circuit" } th { "Failures" }
                th { "In flight" } th { "Owner" } th { "Queued here" }
                th title="The mean duration of the attempts sent to it in the last hour, from request to answer or failure" {
                    "Avg attempt (last hour)" }
            } }
            tbody {
                @for e in data { (endpoint_row(e, v)) }
                @if data.is_empty() { tr { td colspan="11" { "No endpoints." } } }
            }
        }
        p.note #endpoints-more {
            @let total = cards::endpoint_count(v.totals);
            @if (data.len() as i64) < total {
                "The " (data.len()) " with the most waiting of " (total) " endpoints · "
                a href=(with_query("/dashboard/endpoints", &all)) { "all of them, most held first, page by page →" }
            } @else {
                a href=(with_query("/dashboard/endpoints", &all)) { "The endpoints, filtered and sorted →" }
            }
        }
    }
}

/// The overview: the partner filter, the totals (of that partner when
/// given), charts, instances, then the endpoints with the most waiting.
pub fn overview(v: &OverviewView) -> Markup {
    let hour = window_charts(&v.periods.hour, false);
    let day = window_charts(&v.periods.day, true);
    page(
        "Overview",
        Nav::Overview,
        Some(15),
        html! {
            (scope(v))
            (super::incidents::open_incidents(v.incidents, v.now_ms))
            (totals(v))
            h2 { "The last hour and the last 24 hours" }
            @if v.partner.is_some() { p.note { "The charts show every partner." } }
            div.charts #charts {
                @for (h, d) in hour.iter().zip(day.iter()) {
                    figure { (h) } figure { (d) }
                }
            }
            h2 { "Instances" }
            (instances_table(v.actors, v.now_ms))
            (top_endpoints(v))
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
                failing_since: None,
                saved_open_until_ms: None,
                failing_since_ms: None,
            }],
        };
        let b = Buckets::ending_at(0, 60_000, 60);
        let periods = Periods {
            hour: empty_window(b),
            day: empty_window(Buckets::ending_at(0, 900_000, 96)),
        };
        let measured = HashMap::new();
        let view = OverviewView {
            actors: &actors,
            totals: &Totals::default(),
            periods: &periods,
            partner: Some("\"><b>"),
            unknown_partner: true,
            measured: &measured,
            incidents: &[],
            now_ms: 0,
        };
        let page = overview(&view).into_string();
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

    #[test]
    fn the_attempt_average_is_the_measured_mean_and_says_so() {
        let m = Measured {
            mean_ms: 12.4,
            attempts: 4,
        };
        let shown = avg_attempt(Some(&m)).into_string();
        assert!(shown.contains(">12 ms<"), "{shown}");
        assert!(
            shown.contains("the mean of the 4 attempts sent in the last hour"),
            "{shown}"
        );
        let quick = Measured {
            mean_ms: 0.0,
            attempts: 1,
        };
        assert!(
            avg_attempt(Some(&quick))
                .into_string()
                .contains(">&lt; 1 ms<")
        );
        let none = avg_attempt(None).into_string();
        assert!(none.contains(">–<"), "no attempt, no number: {none}");
    }
}
