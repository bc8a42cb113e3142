//! The check's limit per target host: a check of a receiver on a host starts
//! at most once per interval, whichever endpoint names it, so endpoints
//! pointed at one URL cannot make hookd send it a suite each (eight requests
//! and about 260 KiB) every minute. In memory: each instance limits what it
//! sends. The times are the caller's (the injected clock).

use std::{collections::HashMap, sync::Mutex, time::Duration};

use crate::egress::host::Host;

/// Hosts remembered at most; past it, those free again are forgotten.
const REMEMBERED: usize = 10_000;

#[derive(Debug)]
pub struct HostSlots {
    every_ms: i64,
    /// When the last check of each host started (Unix milliseconds).
    started: Mutex<HashMap<String, i64>>,
}

/// A host as the limit knows it (and names it): the name (already
/// lowercase, without a trailing dot) or the address.
pub fn key(host: &Host) -> String {
    match host {
        Host::Ip(ip) => ip.to_string(),
        Host::Name(name) => name.clone(),
    }
}

impl HostSlots {
    /// A check of each host at most once every `every`.
    pub fn new(every: Duration) -> HostSlots {
        HostSlots {
            every_ms: i64::try_from(every.as_millis()).unwrap_or(i64::MAX),
            started: Mutex::default(),
        }
    }

    /// How many milliseconds until a check of `host` may start, if not at
    /// `now_ms`; takes nothing.
    pub fn busy_for(&self, host: &Host, now_ms: i64) -> Option<i64> {
        let started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        self.wait(started.get(&key(host)).copied(), now_ms)
    }

    /// Takes `host`'s slot at `now_ms`, or says in how many milliseconds it
    /// is free.
    pub fn claim(&self, host: &Host, now_ms: i64) -> Result<(), i64> {
        let key = key(host);
        let mut started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(wait) = self.wait(started.get(&key).copied(), now_ms) {
            return Err(wait);
        }
        if started.len() >= REMEMBERED {
            started.retain(|_, at| self.wait(Some(*at), now_ms).is_some());
        }
        started.insert(key, now_ms);
        Ok(())
    }

    /// How long a check that started `last` keeps the slot at `now_ms`.
    fn wait(&self, last: Option<i64>, now_ms: i64) -> Option<i64> {
        let wait = last?.saturating_add(self.every_ms).saturating_sub(now_ms);
        (wait > 0).then_some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Host {
        Host::Name(n.into())
    }

    #[test]
    fn a_host_is_checked_once_per_interval_and_others_meanwhile() {
        let slots = HostSlots::new(Duration::from_secs(60));
        assert_eq!(slots.busy_for(&name("a.example"), 0), None, "never checked");
        assert_eq!(slots.claim(&name("a.example"), 1_000), Ok(()));
        assert_eq!(slots.claim(&name("a.example"), 31_000), Err(30_000));
        assert_eq!(slots.busy_for(&name("a.example"), 31_000), Some(30_000));
        assert_eq!(
            slots.claim(&name("b.example"), 31_000),
            Ok(()),
            "another host"
        );
        let ip = Host::Ip("192.0.2.1".parse().expect("an address"));
        assert_eq!(slots.claim(&ip, 31_000), Ok(()));
        assert_eq!(
            slots.claim(&name("a.example"), 61_000),
            Ok(()),
            "a minute on"
        );
    }

    #[test]
    fn looking_takes_nothing() {
        let slots = HostSlots::new(Duration::from_secs(60));
        assert_eq!(slots.busy_for(&name("a.example"), 0), None);
        assert_eq!(slots.claim(&name("a.example"), 0), Ok(()), "still free");
    }
}
