//! The `[retention]` rule across its keys: events are kept at least as long
//! as deliveries, since a delivery refers to its event and reconciliation
//! (the feed and the export) must outlive the delivery records.

use std::time::Duration;

use super::{ConfigError, RetentionConfig, invalid};

/// Refuses `retention.events` shorter than `retention.deliveries`.
pub(super) fn check(r: &RetentionConfig) -> Result<(), ConfigError> {
    if r.events < r.deliveries {
        return Err(invalid(
            "retention.events",
            format!(
                "must be at least retention.deliveries ({}), got {}: deliveries refer to \
                 their events, and the event feed is how partners reconcile once delivery \
                 records are gone",
                shown(r.deliveries),
                shown(r.events)
            ),
        ));
    }
    Ok(())
}

/// A duration as an operator writes it: whole days as `30d`, else seconds.
fn shown(d: Duration) -> String {
    match d.as_secs() {
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retention(events_days: u64, deliveries_days: u64) -> RetentionConfig {
        let day = Duration::from_secs(86_400);
        RetentionConfig {
            events: day * events_days as u32,
            deliveries: day * deliveries_days as u32,
            sweep_interval: Duration::from_secs(300),
        }
    }

    #[test]
    fn events_kept_at_least_as_long_as_deliveries_are_accepted() {
        assert!(check(&retention(90, 30)).is_ok());
        assert!(check(&retention(30, 30)).is_ok());
    }

    #[test]
    fn events_kept_shorter_than_deliveries_are_refused_naming_retention_events() {
        let e = check(&retention(7, 30)).expect_err("refused");
        let text = e.to_string();
        assert!(text.contains("retention.events"), "{text}");
        assert!(text.contains("retention.deliveries"), "{text}");
    }
}
