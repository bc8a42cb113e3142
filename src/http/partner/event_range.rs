//! The time bounds of a feed read or an export: `since` (at or after) and
//! `until` (before) an event's creation, as RFC 3339 times. A bound that is
//! not a time, an `until` not after `since`, and a range that reaches past
//! what hookd keeps of events are refused naming the parameter.

use crate::{
    config::RetentionConfig,
    domain::event::format_time,
    http::{body, problem::Problem},
};

/// A time range over events' creation, in Unix milliseconds; `None` leaves
/// that side open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeRange {
    pub since: Option<i64>,
    pub until: Option<i64>,
}

const DAY_MS: i64 = 86_400_000;

/// How long events are kept, in milliseconds: how far back a range may start.
pub fn kept_ms(retention: &RetentionConfig) -> i64 {
    i64::try_from(retention.events.as_millis()).unwrap_or(i64::MAX)
}

/// Reads `since` and `until` at `now_ms`, when events are kept `kept_ms`.
pub fn read(
    since: Option<&str>,
    until: Option<&str>,
    now_ms: i64,
    kept_ms: i64,
) -> Result<TimeRange, Problem> {
    let range = TimeRange {
        since: body::optional_time("since", since)?,
        until: body::optional_time("until", until)?,
    };
    check(range, now_ms, kept_ms)?;
    Ok(range)
}

/// The rules on a range already read: pure, so the tests below state them.
fn check(range: TimeRange, now_ms: i64, kept_ms: i64) -> Result<(), Problem> {
    let oldest = now_ms.saturating_sub(kept_ms);
    let kept = if kept_ms % DAY_MS == 0 {
        format!("{} days", kept_ms / DAY_MS)
    } else {
        format!("{} s", kept_ms / 1000)
    };
    if let (Some(since), Some(until)) = (range.since, range.until)
        && until <= since
    {
        return Err(Problem::out_of_range(
            "until",
            format!(
                "until ({}) must be after since ({}): the range is since ≤ created < until",
                format_time(until),
                format_time(since)
            ),
        ));
    }
    let past = |field: &str, at: i64| {
        Problem::out_of_range(
            field,
            format!(
                "{field} ({}) reaches past what hookd keeps: events are kept for {kept} \
                 (`GET /v1/limits`), so the oldest time a range may start at is {}",
                format_time(at),
                format_time(oldest)
            ),
        )
    };
    match range {
        TimeRange {
            since: Some(since), ..
        } if since < oldest => Err(past("since", since)),
        TimeRange {
            since: None,
            until: Some(until),
        } if until <= oldest => Err(past("until", until)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;
    const KEPT: i64 = 90 * DAY_MS;

    fn range(since: Option<i64>, until: Option<i64>) -> TimeRange {
        TimeRange { since, until }
    }

    fn refused_field(r: TimeRange) -> Option<String> {
        check(r, NOW, KEPT).err().and_then(|p| p.field)
    }

    #[test]
    fn an_open_range_and_one_within_retention_are_read() {
        assert_eq!(refused_field(range(None, None)), None);
        assert_eq!(refused_field(range(Some(NOW - KEPT), Some(NOW))), None);
        assert_eq!(refused_field(range(None, Some(NOW + DAY_MS))), None);
    }

    #[test]
    fn an_until_not_after_since_is_refused_naming_until() {
        assert_eq!(
            refused_field(range(Some(NOW), Some(NOW))).as_deref(),
            Some("until")
        );
        assert_eq!(
            refused_field(range(Some(NOW), Some(NOW - 1))).as_deref(),
            Some("until")
        );
    }

    #[test]
    fn a_range_reaching_past_retention_is_refused_naming_its_bound() {
        assert_eq!(
            refused_field(range(Some(NOW - KEPT - 1), None)).as_deref(),
            Some("since")
        );
        assert_eq!(
            refused_field(range(None, Some(NOW - KEPT))).as_deref(),
            Some("until")
        );
    }

    #[test]
    fn the_refusal_of_an_old_since_says_how_long_events_are_kept_and_the_oldest_start() {
        let p = check(range(Some(0), None), NOW, KEPT).expect_err("refused");
        assert!(p.detail.contains("90 days"), "{}", p.detail);
        assert!(p.detail.contains(&format_time(NOW - KEPT)), "{}", p.detail);
        assert_eq!(p.status, 422);
    }

    #[test]
    fn a_bound_that_is_not_a_time_is_refused_naming_it() {
        let p = read(Some("yesterday"), None, NOW, KEPT).expect_err("refused");
        assert_eq!(p.field.as_deref(), Some("since"));
        let p = read(None, Some("2026-13-01"), NOW, KEPT).expect_err("refused");
        assert_eq!(p.field.as_deref(), Some("until"));
    }
}
