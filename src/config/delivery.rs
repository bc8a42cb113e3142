//! The `[delivery]` section: polling, timeouts, the retry schedule, leases,
//! group commits, and the budget of outbound connections.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, duration, invalid, positive};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDelivery {
    poll_interval: String,
    fanout_batch: u32,
    default_concurrency: u32,
    connect_timeout: String,
    request_timeout: String,
    max_response_bytes: usize,
    schedule: Vec<String>,
    jitter: f64,
    max_age: String,
    retry_after_cap: String,
    lease: String,
    record_batch: usize,
    #[serde(default)]
    max_connections: Option<usize>,
    idle_connection_timeout: String,
}

#[derive(Debug, Clone)]
pub struct DeliveryConfig {
    pub poll_interval: Duration,
    pub fanout_batch: u32,
    pub default_concurrency: u32,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub max_response_bytes: usize,
    pub schedule: Vec<Duration>,
    pub jitter: f64,
    pub max_age: Duration,
    pub retry_after_cap: Duration,
    pub lease: Duration,
    pub record_batch: usize,
    /// Outbound sockets this process may hold at once, over all endpoints.
    pub max_connections: Connections,
    /// A kept-alive connection unused this long is closed.
    pub idle_connection_timeout: Duration,
}

/// `delivery.max_connections`: a number, or (unset) what the file limit
/// leaves once the database, the API and the process's own files have theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connections {
    Auto,
    Fixed(usize),
}

/// The automatic budget never exceeds this: past it a 2-core sidecar gains
/// nothing from more sockets, and a flood of new endpoints costs memory.
pub const AUTO_MAX_CONNECTIONS: usize = 1024;
/// Files kept back for the process itself: logs, the SQLite file and its
/// journal, the listener, the resolver's sockets.
pub const FILES_RESERVE: usize = 64;
/// The budget is never below this, whatever the file limit says.
pub const MIN_CONNECTIONS: usize = 16;

impl Connections {
    /// The budget under a soft file limit of `nofile`, with `database` pool
    /// connections and `api` admitted API connections: a fixed budget as
    /// given, the automatic one from what remains.
    pub fn resolve(self, nofile: u64, database: usize, api: usize) -> usize {
        match self {
            Connections::Fixed(n) => n,
            Connections::Auto => {
                let nofile = usize::try_from(nofile).unwrap_or(usize::MAX);
                nofile
                    .saturating_sub(database + api + FILES_RESERVE)
                    .clamp(MIN_CONNECTIONS, AUTO_MAX_CONNECTIONS)
            }
        }
    }
}

impl RawDelivery {
    pub(super) fn validate(self) -> Result<DeliveryConfig, ConfigError> {
        let d = self;
        let schedule = d
            .schedule
            .iter()
            .map(|s| duration("delivery.schedule", s))
            .collect::<Result<Vec<_>, _>>()?;
        if schedule.is_empty() {
            return Err(invalid("delivery.schedule", "needs at least one attempt"));
        }
        if !(0.0..1.0).contains(&d.jitter) {
            return Err(invalid("delivery.jitter", "must be at least 0 and below 1"));
        }
        positive("delivery.fanout_batch", d.fanout_batch.into())?;
        positive("delivery.default_concurrency", d.default_concurrency.into())?;
        positive("delivery.max_response_bytes", d.max_response_bytes as u64)?;
        positive("delivery.record_batch", d.record_batch as u64)?;
        let max_connections = match d.max_connections {
            None => Connections::Auto,
            Some(n) => {
                positive("delivery.max_connections", n as u64)?;
                Connections::Fixed(n)
            }
        };
        let request_timeout = duration("delivery.request_timeout", &d.request_timeout)?;
        let lease = duration("delivery.lease", &d.lease)?;
        if lease <= request_timeout {
            return Err(invalid(
                "delivery.lease",
                "must be longer than delivery.request_timeout",
            ));
        }
        let poll_interval = duration("delivery.poll_interval", &d.poll_interval)?;
        if poll_interval.is_zero() {
            return Err(invalid(
                "delivery.poll_interval",
                "must be greater than zero",
            ));
        }
        let idle_connection_timeout = duration(
            "delivery.idle_connection_timeout",
            &d.idle_connection_timeout,
        )?;
        if idle_connection_timeout.is_zero() {
            return Err(invalid(
                "delivery.idle_connection_timeout",
                "must be greater than zero",
            ));
        }
        let max_age = duration("delivery.max_age", &d.max_age)?;
        window_fits(&schedule, max_age)?;
        Ok(DeliveryConfig {
            poll_interval,
            fanout_batch: d.fanout_batch,
            default_concurrency: d.default_concurrency,
            connect_timeout: duration("delivery.connect_timeout", &d.connect_timeout)?,
            request_timeout,
            max_response_bytes: d.max_response_bytes,
            schedule,
            jitter: d.jitter,
            max_age,
            retry_after_cap: duration("delivery.retry_after_cap", &d.retry_after_cap)?,
            lease,
            record_batch: d.record_batch,
            max_connections,
            idle_connection_timeout,
        })
    }
}

/// The delivery window must leave room for at least the first retry, or
/// every failed first attempt would be the last.
fn window_fits(schedule: &[Duration], max_age: Duration) -> Result<(), ConfigError> {
    let first = crate::domain::retry::first_retry(schedule);
    if max_age < first {
        return Err(invalid(
            "delivery.max_age",
            format!(
                "the delivery window ({} s) is shorter than the first retry ({} s after the event, \
                 from delivery.schedule): no delivery could ever be retried; make it at least {} s",
                max_age.as_secs_f64(),
                first.as_secs_f64(),
                first.as_secs_f64()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_automatic_budget_is_what_the_file_limit_leaves_up_to_a_ceiling() {
        assert_eq!(
            Connections::Auto.resolve(1024, 10, 512),
            1024 - 10 - 512 - 64
        );
        assert_eq!(
            Connections::Auto.resolve(1 << 20, 10, 4096),
            AUTO_MAX_CONNECTIONS
        );
    }

    #[test]
    fn a_window_shorter_than_the_first_retry_is_refused_with_both_times() {
        let s = Duration::from_secs;
        let err = window_fits(&[s(0), s(300), s(1800)], s(60)).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("delivery.max_age"), "{text}");
        assert!(
            text.contains("shorter than the first retry (300 s"),
            "{text}"
        );
        assert!(window_fits(&[s(0), s(300)], s(300)).is_ok());
        assert!(
            window_fits(&[s(0)], s(0)).is_ok(),
            "no retries, nothing to fit"
        );
    }

    #[test]
    fn the_default_window_is_72_hours_and_the_default_schedule_fits_it_with_jitter() {
        let c = crate::config::Config::load(None, Vec::new()).expect("the defaults load");
        let d = &c.delivery;
        assert_eq!(d.max_age, Duration::from_secs(72 * 3600));
        let latest = crate::domain::retry::latest_last_attempt(&d.schedule, d.jitter);
        assert!(
            latest <= d.max_age,
            "the last attempt could fall due {latest:?} after the event"
        );
    }

    #[test]
    fn a_tiny_file_limit_still_leaves_a_floor_and_a_fixed_budget_is_kept() {
        assert_eq!(Connections::Auto.resolve(256, 10, 512), MIN_CONNECTIONS);
        assert_eq!(Connections::Fixed(5000).resolve(256, 10, 512), 5000);
    }
}
