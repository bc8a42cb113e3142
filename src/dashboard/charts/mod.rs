//! Charts drawn on the server as inline SVG: pure functions from numbers
//! to markup. Every chart has a title, a value axis with its unit, a time
//! axis in UTC and a text alternative (`<title>` and `<desc>`, named by
//! `aria-labelledby`); each bar and point carries its own `<title>` with
//! its time and value. Every number is formatted here, and every string
//! goes through maud, which escapes it.

use maud::{Markup, html};

mod numbers;

pub use numbers::{Unit, scale};

use crate::{domain::clock::from_ms, store::charts::Buckets};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = WIDTH - 12.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = HEIGHT - 44.0;

/// One line or one layer of bars: a value (or none) per bucket.
#[derive(Debug, Clone)]
pub struct Series<'a> {
    pub name: &'a str,
    /// The class of its marks, for styling and for tests to find them.
    pub class: &'a str,
    pub color: &'a str,
    pub values: Vec<Option<f64>>,
}

#[derive(Debug, Clone)]
pub struct Chart<'a> {
    /// The `<svg>` element's id.
    pub id: &'a str,
    pub title: &'a str,
    /// The value axis's label, with its unit ("attempts per minute").
    pub y_label: &'a str,
    pub unit: Unit,
    pub buckets: Buckets,
    pub series: Vec<Series<'a>>,
}

/// `HH:MM` in UTC.
fn clock(ms: i64) -> String {
    from_ms(ms).format("%H:%M").to_string()
}

fn fmt(x: f64) -> String {
    format!("{x:.1}")
}

/// How many buckets apart the time labels stand: about six labels.
fn label_every(count: usize) -> usize {
    count.div_ceil(6).max(1)
}

fn bucket_width(c: &Chart) -> f64 {
    (RIGHT - LEFT) / c.buckets.count.max(1) as f64
}

fn y_of(v: f64, top: f64) -> f64 {
    BOTTOM - (v / top).clamp(0.0, 1.0) * (BOTTOM - TOP)
}

/// What a bucket's mark says when pointed at: `14:02 UTC: 3 delivered`.
fn mark_title(c: &Chart, i: usize, name: &str, v: f64) -> String {
    let at = c.buckets.start_ms + c.buckets.step_ms * i as i64;
    format!("{} UTC: {} {name}", clock(at), c.unit.format(v))
}

/// The largest value the axis must reach: of the stacks when `stacked`.
fn max_value(c: &Chart, stacked: bool) -> f64 {
    let at = |i: usize| {
        c.series
            .iter()
            .filter_map(move |s| s.values.get(i).copied().flatten())
    };
    (0..c.buckets.count)
        .map(|i| {
            if stacked {
                at(i).sum::<f64>()
            } else {
                at(i).fold(0.0, f64::max)
            }
        })
        .fold(0.0, f64::max)
}

/// Whether there is anything to draw: a bar above zero, or any point
/// (zero is a value on a line).
fn has_data(c: &Chart, stacked: bool) -> bool {
    c.series.iter().any(|s| {
        s.values
            .iter()
            .any(|v| v.is_some_and(|v| !stacked || v > 0.0))
    })
}

/// The text alternative: each series' total (bars) or latest and highest
/// value (lines) over the period.
pub fn summary(c: &Chart, stacked: bool) -> String {
    if !has_data(c, stacked) {
        return format!("{}: no data in this period.", c.title);
    }
    let parts: Vec<String> = c
        .series
        .iter()
        .map(|s| {
            let values: Vec<f64> = s.values.iter().copied().flatten().collect();
            let highest = values.iter().copied().fold(0.0, f64::max);
            if stacked {
                let total: f64 = values.iter().sum();
                format!(
                    "{} {} in all, at most {} in one bucket",
                    c.unit.format(total),
                    s.name,
                    c.unit.format(highest)
                )
            } else {
                match values.last() {
                    None => format!("{}: no data", s.name),
                    Some(latest) => format!(
                        "{}: latest {}, highest {}",
                        s.name,
                        c.unit.format(*latest),
                        c.unit.format(highest)
                    ),
                }
            }
        })
        .collect();
    format!("{}: {}.", c.title, parts.join("; "))
}

/// The frame every chart shares: title, legend, axes, ticks and labels,
/// with `marks` drawn inside.
fn frame(c: &Chart, stacked: bool, top: f64, step: f64, marks: Markup) -> Markup {
    let title_id = format!("{}-title", c.id);
    let desc_id = format!("{}-desc", c.id);
    let ticks = (top / step).round() as usize;
    let bw = bucket_width(c);
    let every = label_every(c.buckets.count);
    html! {
        svg id=(c.id) class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
            viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } width="100%"
            aria-labelledby={ (title_id) " " (desc_id) } {
            title id=(title_id) { (c.title) }
            desc id=(desc_id) { (summary(c, stacked)) }
            text.chart-title x=(LEFT) y="16" font-size="13" font-weight="600" { (c.title) }
            g.legend font-size="11" {
                @for (i, s) in c.series.iter().enumerate() {
                    @let x = RIGHT - 90.0 * (c.series.len() - i) as f64;
                    rect x=(fmt(x)) y="23" width="10" height="10" fill=(s.color) {}
                    text x=(fmt(x + 14.0)) y="32" { (s.name) }
                }
            }
            g.y-axis font-size="10" text-anchor="end" {
                @for k in 0..=ticks {
                    @let v = step * k as f64;
                    @let y = y_of(v, top);
                    line x1=(LEFT) x2=(RIGHT) y1=(fmt(y)) y2=(fmt(y)) stroke="#e3e7eb" {}
                    text.tick x=(LEFT - 6.0) y=(fmt(y + 3.0)) { (c.unit.format(v)) }
                }
                text.axis-label transform="rotate(-90)" x=(fmt(-(TOP + BOTTOM) / 2.0)) y="14"
                    text-anchor="middle" { (c.y_label) }
            }
            g.x-axis font-size="10" text-anchor="middle" {
                line x1=(LEFT) x2=(RIGHT) y1=(BOTTOM) y2=(BOTTOM) stroke="#8a939c" {}
                @for i in (0..c.buckets.count).step_by(every) {
                    @let x = LEFT + bw * i as f64;
                    line x1=(fmt(x)) x2=(fmt(x)) y1=(BOTTOM) y2=(BOTTOM + 4.0) stroke="#8a939c" {}
                    text.tick x=(fmt(x)) y=(BOTTOM + 16.0) {
                        (clock(c.buckets.start_ms + c.buckets.step_ms * i as i64))
                    }
                }
                text.axis-label x=(fmt((LEFT + RIGHT) / 2.0)) y=(HEIGHT - 6.0) { "time (UTC)" }
            }
            (marks)
            @if !has_data(c, stacked) {
                text.empty x=(fmt((LEFT + RIGHT) / 2.0)) y=(fmt((TOP + BOTTOM) / 2.0))
                    text-anchor="middle" font-size="12" fill="#6b7280" { "No data in this period" }
            }
        }
    }
}

/// One bar of a stack: bucket, series, value and its top and bottom.
struct Bar<'s> {
    bucket: usize,
    series: &'s Series<'s>,
    value: f64,
    y_top: f64,
    y_bottom: f64,
}

/// Bars per bucket, the series stacked in order from the axis up.
pub fn stacked_bars(c: &Chart) -> Markup {
    let (top, step) = scale(max_value(c, true));
    let bw = bucket_width(c);
    let gap = if bw > 4.0 { 1.0 } else { 0.0 };
    let mut bars = Vec::new();
    for bucket in 0..c.buckets.count {
        let mut base = 0.0;
        for series in &c.series {
            let Some(value) = series.values.get(bucket).copied().flatten() else {
                continue;
            };
            if value > 0.0 {
                bars.push(Bar {
                    bucket,
                    series,
                    value,
                    y_top: y_of(base + value, top),
                    y_bottom: y_of(base, top),
                });
                base += value;
            }
        }
    }
    let marks = html! {
        g.marks {
            @for b in &bars {
                rect class={ "bar " (b.series.class) } x=(fmt(LEFT + bw * b.bucket as f64 + gap))
                    y=(fmt(b.y_top)) width=(fmt((bw - 2.0 * gap).max(1.0)))
                    height=(fmt((b.y_bottom - b.y_top).max(0.5))) fill=(b.series.color) {
                    title { (mark_title(c, b.bucket, b.series.name, b.value)) }
                }
            }
        }
    };
    frame(c, true, top, step, marks)
}

/// A line per series through the buckets that have a value, with a point
/// on each; a bucket without one breaks the line.
pub fn lines(c: &Chart) -> Markup {
    let (top, step) = scale(max_value(c, false));
    let bw = bucket_width(c);
    let point = |i: usize, v: f64| (LEFT + bw * (i as f64 + 0.5), y_of(v, top));
    let marks = html! {
        g.marks {
            @for s in &c.series {
                @for run in runs(&s.values) {
                    polyline class={ "line " (s.class) } fill="none" stroke=(s.color) stroke-width="1.5"
                        points=(run.iter().map(|(i, v)| {
                            let (x, y) = point(*i, *v);
                            format!("{},{}", fmt(x), fmt(y))
                        }).collect::<Vec<_>>().join(" ")) {}
                }
                @for (i, v) in s.values.iter().enumerate() {
                    @if let Some(v) = v {
                        @let (x, y) = point(i, *v);
                        circle class={ "point " (s.class) } cx=(fmt(x)) cy=(fmt(y)) r="2" fill=(s.color) {
                            title { (mark_title(c, i, s.name, *v)) }
                        }
                    }
                }
            }
        }
    };
    frame(c, false, top, step, marks)
}

/// The runs of consecutive buckets with a value: `(bucket, value)` each.
fn runs(values: &[Option<f64>]) -> Vec<Vec<(usize, f64)>> {
    let mut out: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut current = Vec::new();
    for (i, v) in values.iter().enumerate() {
        match v {
            Some(v) => current.push((i, *v)),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000;

    fn chart<'a>(series: Vec<Series<'a>>, unit: Unit) -> Chart<'a> {
        Chart {
            id: "c",
            title: "Attempts",
            y_label: "attempts per minute",
            unit,
            // 12:00 to 12:04 UTC on 2025-12-02.
            buckets: Buckets {
                start_ms: 1_764_676_800_000,
                step_ms: MINUTE,
                count: 4,
            },
            series,
        }
    }

    fn series<'a>(name: &'a str, values: &[Option<f64>]) -> Series<'a> {
        Series {
            name,
            class: name,
            color: "#123456",
            values: values.to_vec(),
        }
    }

    #[test]
    fn stacked_bars_draw_each_nonzero_value_at_its_height() {
        let c = chart(
            vec![
                series("delivered", &[Some(2.0), Some(0.0), None, Some(4.0)]),
                series("failed", &[Some(2.0), None, None, Some(0.0)]),
            ],
            Unit::Count,
        );
        let svg = stacked_bars(&c).into_string();
        assert_eq!(svg.matches("class=\"bar delivered\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"bar failed\"").count(), 1, "{svg}");
        // The axis runs 0 to 4 (the two stacks reach 4); a value of 4 fills
        // the plot's height.
        let full = fmt(BOTTOM - TOP);
        assert!(svg.contains(&format!("height=\"{full}\"")), "{svg}");
        assert!(
            svg.contains("<title>12:03 UTC: 4 delivered</title>"),
            "{svg}"
        );
        assert!(svg.contains("<title>12:00 UTC: 2 failed</title>"), "{svg}");
        assert!(svg.contains("6 delivered in all"), "{svg}");
        assert!(svg.contains(">12:00</text>"), "a time label: {svg}");
        assert!(svg.contains(">attempts per minute</text>"), "{svg}");
        assert!(svg.contains("aria-labelledby=\"c-title c-desc\""), "{svg}");
    }

    #[test]
    fn the_text_alternative_totals_each_series() {
        let c = chart(
            vec![
                series("delivered", &[Some(2.0), None, None, Some(4.0)]),
                series("failed", &[Some(1.0), None, None, None]),
            ],
            Unit::Count,
        );
        assert_eq!(
            summary(&c, true),
            "Attempts: 6 delivered in all, at most 4 in one bucket; 1 failed in all, at most 1 in one bucket."
        );
        let lat = chart(
            vec![series(
                "p99",
                &[Some(200.0), Some(1500.0), None, Some(900.0)],
            )],
            Unit::Millis,
        );
        assert_eq!(
            summary(&lat, false),
            "Attempts: p99: latest 900 ms, highest 1.5 s."
        );
    }

    #[test]
    fn lines_break_where_a_bucket_has_no_value() {
        let c = chart(
            vec![series("p50", &[Some(100.0), Some(200.0), None, Some(50.0)])],
            Unit::Millis,
        );
        let svg = lines(&c).into_string();
        assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
        assert_eq!(svg.matches("class=\"point p50\"").count(), 3, "{svg}");
        assert!(
            svg.contains("<title>12:01 UTC: 200 ms p50</title>"),
            "{svg}"
        );
        assert!(
            svg.contains(">200 ms</text>"),
            "the axis top reads in ms: {svg}"
        );
    }

    #[test]
    fn an_empty_chart_says_so_and_draws_no_marks() {
        let c = chart(
            vec![series("delivered", &[None, None, None, None])],
            Unit::Count,
        );
        let zeros = chart(vec![series("delivered", &[Some(0.0); 4])], Unit::Count);
        let (bars_of_zeros, line_of_zeros) = (
            stacked_bars(&zeros).into_string(),
            lines(&zeros).into_string(),
        );
        assert!(
            bars_of_zeros.contains("No data in this period"),
            "no attempts: {bars_of_zeros}"
        );
        assert_eq!(
            line_of_zeros.matches("<circle").count(),
            4,
            "zero is a value on a line: {line_of_zeros}"
        );
        assert!(!line_of_zeros.contains("No data"), "{line_of_zeros}");
        for svg in [stacked_bars(&c).into_string(), lines(&c).into_string()] {
            assert!(!svg.contains("<rect class=\"bar"), "{svg}");
            assert!(!svg.contains("<circle"), "{svg}");
            assert!(svg.contains("No data in this period"), "{svg}");
            assert!(svg.contains("Attempts: no data in this period."), "{svg}");
            assert!(
                svg.contains(">1</text>"),
                "the axis still runs 0 to 1: {svg}"
            );
        }
    }

    #[test]
    fn names_and_titles_are_escaped() {
        let mut c = chart(
            vec![series(
                "<script>alert(1)</script>",
                &[Some(1.0), None, None, None],
            )],
            Unit::Count,
        );
        c.title = "a \"quoted\" <b>title</b>";
        c.id = "x\" onload=\"alert(1)";
        let svg = stacked_bars(&c).into_string();
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(!svg.contains("<b>"), "{svg}");
        assert!(!svg.contains("\" onload=\""), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        assert!(
            svg.contains("a &quot;quoted&quot; &lt;b&gt;title&lt;/b&gt;"),
            "{svg}"
        );
    }
}
