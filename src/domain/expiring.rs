//! A bounded map whose entries expire: what an in-process cache in front of
//! the database holds. Pure; the caller passes the time in milliseconds.
//!
//! An answer read from the database may be stale by the time it is stored:
//! a change announced while the read was under way must not be undone by
//! it. So a look-up takes a [`Ticket`] before it reads, and every forgetting
//! voids the tickets taken before it: `put` with a void ticket stores nothing.

use std::{borrow::Borrow, collections::HashMap, hash::Hash, time::Duration};

/// When a look-up began, as the map counts its forgettings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

#[derive(Debug)]
pub struct Expiring<K, V> {
    entries: HashMap<K, (V, i64)>,
    /// How long an entry answers, in milliseconds.
    ttl_ms: i64,
    capacity: usize,
    /// Forgettings so far: a ticket from before the last one is void.
    forgotten: u64,
}

impl<K: Eq + Hash, V> Expiring<K, V> {
    /// An empty map whose entries answer for `ttl`, holding at most `capacity`.
    pub fn new(ttl: Duration, capacity: usize) -> Expiring<K, V> {
        Expiring {
            entries: HashMap::new(),
            ttl_ms: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
            capacity,
            forgotten: 0,
        }
    }

    /// The value stored under `key`, unless it is older than the map's ttl
    /// at `now_ms` (or stored "after" it: a clock set back expires it too).
    pub fn get<Q>(&self, key: &Q, now_ms: i64) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        let (value, stored_at) = self.entries.get(key)?;
        self.fresh(*stored_at, now_ms).then_some(value)
    }

    fn fresh(&self, stored_at: i64, now_ms: i64) -> bool {
        let age = now_ms.saturating_sub(stored_at);
        (0..self.ttl_ms).contains(&age)
    }

    /// Taken before a look-up whose answer may be `put`.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.forgotten)
    }

    /// Stores `value`, read at `read_at_ms` (when the look-up began), unless
    /// something was forgotten since `ticket` was taken or the map is full
    /// of fresh entries. Whether it was stored.
    pub fn put(&mut self, ticket: Ticket, key: K, value: V, read_at_ms: i64) -> bool {
        if ticket.0 != self.forgotten {
            return false;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            let ttl_ms = self.ttl_ms;
            self.entries
                .retain(|_, (_, at)| (0..ttl_ms).contains(&read_at_ms.saturating_sub(*at)));
            if self.entries.len() >= self.capacity {
                return false;
            }
        }
        self.entries.insert(key, (value, read_at_ms));
        true
    }

    /// Forgets every entry for which `gone` holds, and voids the tickets
    /// taken so far.
    pub fn forget_where(&mut self, mut gone: impl FnMut(&K, &V) -> bool) {
        self.forgotten += 1;
        self.entries.retain(|k, (v, _)| !gone(k, v));
    }

    /// Forgets everything, and voids the tickets taken so far.
    pub fn forget_all(&mut self) {
        self.forgotten += 1;
        self.entries.clear();
    }

    /// Entries held, expired or not.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::TimeZone;

    use super::Expiring;
    use crate::domain::clock::{Clock, ManualClock};

    const TTL: Duration = Duration::from_secs(5);

    fn clock() -> ManualClock {
        ManualClock::starting_at(chrono::Utc.timestamp_opt(1_800_000_000, 0).unwrap())
    }

    #[test]
    fn an_entry_answers_until_its_time_is_up_and_not_a_moment_longer() {
        let clock = clock();
        let mut map = Expiring::new(TTL, 10);
        let ticket = map.ticket();
        assert!(map.put(ticket, "k", 1, clock.now_ms()), "stored");
        clock.advance(TTL - Duration::from_millis(1));
        assert_eq!(map.get("k", clock.now_ms()), Some(&1), "still fresh");
        clock.advance(Duration::from_millis(1));
        assert_eq!(map.get("k", clock.now_ms()), None, "expired at the bound");
    }

    #[test]
    fn a_clock_set_back_expires_an_entry_rather_than_prolonging_it() {
        let clock = clock();
        let mut map = Expiring::new(TTL, 10);
        let ticket = map.ticket();
        map.put(ticket, "k", 1, clock.now_ms());
        assert_eq!(map.get("k", clock.now_ms() - 1), None);
    }

    #[test]
    fn an_answer_read_before_a_forgetting_is_not_stored() {
        let clock = clock();
        let mut map = Expiring::new(TTL, 10);
        let before = map.ticket();
        map.forget_where(|k, _| *k == "other");
        assert!(!map.put(before, "k", 1, clock.now_ms()), "a void ticket");
        assert_eq!(map.get("k", clock.now_ms()), None);
        let after = map.ticket();
        assert!(map.put(after, "k", 1, clock.now_ms()), "a fresh ticket");
    }

    #[test]
    fn forgetting_drops_only_what_it_names() {
        let clock = clock();
        let mut map = Expiring::new(TTL, 10);
        let ticket = map.ticket();
        map.put(ticket, "a", 1, clock.now_ms());
        map.put(ticket, "b", 2, clock.now_ms());
        map.forget_where(|_, v| *v == 1);
        assert_eq!(map.get("a", clock.now_ms()), None);
        assert_eq!(map.get("b", clock.now_ms()), Some(&2));
        map.forget_all();
        assert!(map.is_empty());
    }

    #[test]
    fn a_full_map_makes_room_from_expired_entries_only() {
        let clock = clock();
        let mut map = Expiring::new(TTL, 2);
        let ticket = map.ticket();
        map.put(ticket, "a", 1, clock.now_ms());
        clock.advance(Duration::from_secs(3));
        map.put(ticket, "b", 2, clock.now_ms());
        assert!(
            !map.put(ticket, "c", 3, clock.now_ms()),
            "full of fresh entries: nothing stored"
        );
        clock.advance(Duration::from_secs(3));
        assert!(map.put(ticket, "c", 3, clock.now_ms()), "`a` expired");
        assert_eq!(map.len(), 2);
        assert_eq!(map.get("b", clock.now_ms()), Some(&2));
    }
}
