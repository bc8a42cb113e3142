//! At most one log line per key (an endpoint and a kind of line) per
//! period, so a broken endpoint cannot flood the log. The lines held back
//! are counted, and the next line said for that key carries the count.
//! Pure: the caller passes the time.

use std::{collections::HashMap, hash::Hash, time::Duration};

/// Remembers, per key, when its last line was said and how many were held
/// back since.
#[derive(Debug)]
pub struct LogLimit<K> {
    period_ms: i64,
    seen: HashMap<K, Window>,
    /// Forgetting runs when the map grows past this.
    prune_at: usize,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    said_at: i64,
    held_back: u64,
}

/// Forgetting keys starts at this many.
const PRUNE_FIRST_AT: usize = 1024;

impl<K: Eq + Hash> LogLimit<K> {
    pub fn new(period: Duration) -> LogLimit<K> {
        LogLimit {
            period_ms: i64::try_from(period.as_millis()).unwrap_or(i64::MAX),
            seen: HashMap::new(),
            prune_at: PRUNE_FIRST_AT,
        }
    }

    /// Whether to say a line for `key` at `now_ms`: `Some(n)` says it, `n`
    /// being how many lines for the key were held back since the last one
    /// said; `None` holds it back (and counts it).
    pub fn admit(&mut self, key: K, now_ms: i64) -> Option<u64> {
        self.prune(now_ms);
        let period = self.period_ms;
        match self.seen.get_mut(&key) {
            // A clock that went back says at once rather than hold for as long.
            Some(w) if now_ms >= w.said_at && now_ms - w.said_at < period => {
                w.held_back += 1;
                None
            }
            Some(w) => {
                let held_back = w.held_back;
                *w = Window {
                    said_at: now_ms,
                    held_back: 0,
                };
                Some(held_back)
            }
            None => {
                self.seen.insert(
                    key,
                    Window {
                        said_at: now_ms,
                        held_back: 0,
                    },
                );
                Some(0)
            }
        }
    }

    /// Forgets keys whose period is over with nothing held back: they would
    /// be said at once anyway. Keys with a count wait for their next line.
    fn prune(&mut self, now_ms: i64) {
        if self.seen.len() < self.prune_at {
            return;
        }
        let period = self.period_ms;
        self.seen
            .retain(|_, w| w.held_back > 0 || (now_ms - w.said_at).abs() < period);
        self.prune_at = (self.seen.len() * 2).max(PRUNE_FIRST_AT);
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000;

    fn limit() -> LogLimit<(&'static str, u8)> {
        LogLimit::new(Duration::from_secs(60))
    }

    #[test]
    fn the_first_line_of_a_key_is_said_at_once() {
        let mut l = limit();
        assert_eq!(l.admit(("ep_1", 0), 0), Some(0));
    }

    #[test]
    fn a_flood_within_the_period_is_one_line_and_the_next_one_counts_the_rest() {
        let mut l = limit();
        assert_eq!(l.admit(("ep_1", 0), 0), Some(0));
        for t in 1..=500 {
            assert_eq!(l.admit(("ep_1", 0), t * 100), None, "held back at {t}");
        }
        assert_eq!(
            l.admit(("ep_1", 0), MINUTE),
            Some(500),
            "a minute after the last line said, the next one says how many were held back"
        );
        assert_eq!(l.admit(("ep_1", 0), MINUTE + 1), None);
        assert_eq!(
            l.admit(("ep_1", 0), 5 * MINUTE),
            Some(1),
            "the count starts again after each line said"
        );
        assert_eq!(l.admit(("ep_1", 0), 7 * MINUTE), Some(0));
    }

    #[test]
    fn endpoints_and_kinds_are_limited_apart() {
        let mut l = limit();
        assert_eq!(l.admit(("ep_1", 0), 0), Some(0));
        assert_eq!(
            l.admit(("ep_1", 1), 1),
            Some(0),
            "another kind, same endpoint"
        );
        assert_eq!(
            l.admit(("ep_2", 0), 2),
            Some(0),
            "same kind, another endpoint"
        );
        assert_eq!(l.admit(("ep_1", 0), 3), None);
    }

    #[test]
    fn a_clock_that_went_back_does_not_hold_lines_back() {
        let mut l = limit();
        assert_eq!(l.admit(("ep_1", 0), 10 * MINUTE), Some(0));
        assert_eq!(l.admit(("ep_1", 0), MINUTE), Some(0));
    }

    #[test]
    fn keys_with_nothing_to_say_are_forgotten_and_counts_are_kept() {
        let mut l = limit();
        let names: Vec<&'static str> = (0..2000)
            .map(|i| &*Box::leak(format!("ep_{i}").into_boxed_str()))
            .collect();
        assert_eq!(l.admit((names[0], 0), 0), Some(0));
        assert_eq!(l.admit((names[0], 0), 1), None, "ep_0 has one held back");
        for (i, name) in names.iter().enumerate().skip(1) {
            // One every 100 ms: the oldest are past their minute when the map is pruned.
            l.admit((name, 0), 2 * MINUTE + i as i64 * 100);
        }
        assert!(
            l.remembered() < 2000,
            "keys whose minute is over were forgotten ({} kept)",
            l.remembered()
        );
        assert_eq!(
            l.admit((names[0], 0), 6 * MINUTE),
            Some(1),
            "a held-back count survives forgetting"
        );
    }
}
