//! The active endpoints of recently seen partners, kept between group
//! commits on PostgreSQL so that a commit need not read them first (a round
//! trip and a pool checkout per commit, a fifth of a one-endpoint commit).
//!
//! An entry is never trusted alone: the statement that publishes with it
//! recomputes each partner's [`fingerprint`](super::subscribers::fingerprint)
//! from the rows it sees and writes nothing when one differs; the entry is
//! then forgotten and read again. So a change made anywhere (this instance's
//! API, another instance, SQL by hand) reaches the next event of the
//! partner, as when every commit read the endpoints itself.

use std::{collections::HashMap, sync::Mutex};

use super::subscribers::{Subscriber, Subscribers};

/// Partners kept at most; past it the cache starts again empty (a partner
/// costs one read to come back).
const MAX_PARTNERS: usize = 4096;

#[derive(Default)]
pub struct RoutingCache {
    /// Partner → its active endpoints when last read (none is an entry too).
    partners: Mutex<HashMap<String, Vec<Subscriber>>>,
}

impl RoutingCache {
    /// The active endpoints of every one of `partners` as last read, by
    /// partner (as `subscribers::active` reads them), if all are kept.
    pub fn get(&self, partners: &[&str]) -> Option<Subscribers> {
        let kept = self.lock();
        let mut out = Subscribers::new();
        for partner in partners {
            let endpoints = kept.get(*partner)?;
            if !endpoints.is_empty() {
                out.insert(partner.to_string(), endpoints.clone());
            }
        }
        Some(out)
    }

    /// Keeps what was just read for `partners` (those absent from `read`
    /// have no active endpoint).
    pub fn keep(&self, partners: &[&str], read: &Subscribers) {
        let mut kept = self.lock();
        if kept.len() + partners.len() > MAX_PARTNERS {
            kept.clear();
        }
        for partner in partners {
            let endpoints = read.get(*partner).cloned().unwrap_or_default();
            kept.insert(partner.to_string(), endpoints);
        }
    }

    /// Forgets `partners`: something about their endpoints changed.
    pub fn forget(&self, partners: &[&str]) {
        let mut kept = self.lock();
        for partner in partners {
            kept.remove(*partner);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Subscriber>>> {
        // A panic while holding it cannot leave a half-written entry.
        self.partners.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn read(partner: &str, endpoint: &str) -> Subscribers {
        let subscriber = Subscriber {
            id: endpoint.into(),
            version: "1".into(),
            event_types: Vec::new(),
            ordered: false,
            pins: BTreeMap::new(),
            filter: None,
        };
        Subscribers::from([(partner.to_string(), vec![subscriber])])
    }

    #[test]
    fn a_batch_is_served_only_when_every_partner_in_it_is_kept() {
        let cache = RoutingCache::default();
        assert!(cache.get(&["p1"]).is_none());
        cache.keep(&["p1"], &read("p1", "ep_1"));
        let got = cache.get(&["p1"]).expect("p1 is kept");
        assert_eq!(got["p1"][0].id, "ep_1");
        assert!(cache.get(&["p1", "p2"]).is_none(), "p2 was never read");
    }

    #[test]
    fn a_partner_read_with_no_endpoints_is_kept_as_having_none() {
        let cache = RoutingCache::default();
        cache.keep(&["p1", "p2"], &read("p1", "ep_1"));
        let got = cache.get(&["p2"]).expect("p2 is kept");
        assert!(got.is_empty(), "p2 has no active endpoint");
    }

    #[test]
    fn a_forgotten_partner_is_read_again() {
        let cache = RoutingCache::default();
        cache.keep(&["p1"], &read("p1", "ep_1"));
        cache.forget(&["p1"]);
        assert!(cache.get(&["p1"]).is_none());
    }

    #[test]
    fn the_cache_starts_again_empty_rather_than_grow_past_its_bound() {
        let cache = RoutingCache::default();
        let many: Vec<String> = (0..MAX_PARTNERS).map(|i| format!("p{i}")).collect();
        let names: Vec<&str> = many.iter().map(String::as_str).collect();
        cache.keep(&names, &Subscribers::new());
        cache.keep(&["late"], &read("late", "ep_1"));
        assert!(cache.get(&["p0"]).is_none(), "the old entries went");
        assert!(cache.get(&["late"]).is_some(), "the new one is kept");
        assert!(cache.lock().len() <= MAX_PARTNERS);
    }
}
