//! Times as a person reads them at a glance: relative to now ("in 12 s",
//! "3 min ago", "yesterday"), each in a `<time>` element that keeps the
//! exact instant (`datetime`, RFC 3339) and shows it in UTC as a tooltip,
//! so nothing is lost.

use maud::{Markup, html};

use crate::domain::{clock::from_ms, event::format_time};

const SECOND: i64 = 1_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// Unix ms as the pages show an exact time: `2026-12-02 14:03:07 UTC`.
pub fn at(ms: i64) -> String {
    from_ms(ms).format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// How far `t_ms` is from `now_ms`, in the largest whole unit that fits
/// (rounded down): `now`, `in 12 s`, `3 min ago`, `2 h ago`, `yesterday`,
/// `in 5 days`, `4 months ago`, `2 years ago`. Under a second either way
/// is `now`. Days count 24 hours from now, not calendar days in some zone.
pub fn relative(now_ms: i64, t_ms: i64) -> String {
    let (future, gap) = (t_ms > now_ms, t_ms.abs_diff(now_ms));
    let gap = i64::try_from(gap).unwrap_or(i64::MAX);
    let amount = match gap {
        g if g < SECOND => return "now".to_string(),
        g if g < MINUTE => format!("{} s", g / SECOND),
        g if g < HOUR => format!("{} min", g / MINUTE),
        g if g < DAY => format!("{} h", g / HOUR),
        g if g < 2 * DAY => return if future { "tomorrow" } else { "yesterday" }.to_string(),
        g if g < 60 * DAY => format!("{} days", g / DAY),
        g if g < 365 * DAY => format!("{} months", g / (30 * DAY)),
        g if g < 2 * 365 * DAY => "1 year".to_string(),
        g => format!("{} years", g / (365 * DAY)),
    };
    if future {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

/// `t_ms` relative to `now_ms`, as a `<time>` whose `datetime` holds the
/// instant and whose tooltip shows it in UTC.
pub fn when(now_ms: i64, t_ms: i64) -> Markup {
    html! { time datetime=(format_time(t_ms)) title=(at(t_ms)) { (relative(now_ms, t_ms)) } }
}

/// An optional time as [`when`], or a dash.
pub fn when_or_dash(now_ms: i64, t_ms: Option<i64>) -> Markup {
    match t_ms {
        Some(t) => when(now_ms, t),
        None => html! { "–" },
    }
}

/// An RFC 3339 time from the API's views as [`when`]; text that is not
/// one is shown as it is.
pub fn when_text(now_ms: i64, text: &str) -> Markup {
    match chrono::DateTime::parse_from_rfc3339(text) {
        Ok(t) => when(now_ms, t.timestamp_millis()),
        Err(_) => html! { (text) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_676_800_000;

    fn ago(ms: i64) -> String {
        relative(NOW, NOW - ms)
    }

    fn ahead(ms: i64) -> String {
        relative(NOW, NOW + ms)
    }

    #[test]
    fn the_largest_whole_unit_is_shown_in_the_past() {
        let cases = [
            (0, "now"),
            (999, "now"),
            (SECOND, "1 s ago"),
            (59 * SECOND + 999, "59 s ago"),
            (MINUTE, "1 min ago"),
            (3 * MINUTE + 59 * SECOND, "3 min ago"),
            (HOUR - 1, "59 min ago"),
            (2 * HOUR + 30 * MINUTE, "2 h ago"),
            (DAY - 1, "23 h ago"),
            (DAY, "yesterday"),
            (2 * DAY - 1, "yesterday"),
            (2 * DAY, "2 days ago"),
            (59 * DAY, "59 days ago"),
            (60 * DAY, "2 months ago"),
            (364 * DAY, "12 months ago"),
            (365 * DAY, "1 year ago"),
            (3 * 365 * DAY, "3 years ago"),
        ];
        for (gap, want) in cases {
            assert_eq!(ago(gap), want, "{gap} ms ago");
        }
    }

    #[test]
    fn the_future_reads_in_so_long() {
        let cases = [
            (500, "now"),
            (12 * SECOND + 400, "in 12 s"),
            (5 * MINUTE, "in 5 min"),
            (HOUR, "in 1 h"),
            (DAY + HOUR, "tomorrow"),
            (3 * DAY, "in 3 days"),
            (400 * DAY, "in 1 year"),
        ];
        for (gap, want) in cases {
            assert_eq!(ahead(gap), want, "{gap} ms ahead");
        }
    }

    #[test]
    fn extreme_times_do_not_overflow() {
        assert!(relative(i64::MAX, i64::MIN).ends_with("years ago"));
        assert!(relative(i64::MIN, i64::MAX).starts_with("in "));
    }

    #[test]
    fn the_element_keeps_the_exact_time() {
        let html = when(NOW, NOW - 3 * MINUTE).into_string();
        assert_eq!(
            html,
            r#"<time datetime="2025-12-02T11:57:00Z" title="2025-12-02 11:57:00 UTC">3 min ago</time>"#
        );
        assert_eq!(when_or_dash(NOW, None).into_string(), "–");
        let parsed = when_text(NOW, "2025-12-02T12:00:12Z").into_string();
        assert!(parsed.ends_with(">in 12 s</time>"), "{parsed}");
        assert_eq!(when_text(NOW, "soon").into_string(), "soon");
    }
}
