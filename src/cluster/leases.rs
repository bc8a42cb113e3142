//! This instance's leases as its actors see them: which endpoints it owns,
//! under which epoch, and until when that knowledge is safe. The cluster
//! actor writes it after each heartbeat; endpoint actors read it before each
//! claim and each attempt. A lease is only trusted for `lease_ttl` after the
//! heartbeat that confirmed it began: a paused process or a lost database
//! sends nothing once that passes, even before it learns who took over.

use std::{
    collections::HashMap,
    sync::RwLock,
    time::{Duration, Instant},
};

/// What an endpoint actor may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Owned under this epoch, and confirmed recently: claim and send.
    Owned { epoch: i64 },
    /// Owned as far as is known, but not confirmed within the lease period
    /// (the database is away, or the process was paused): hold still.
    Unconfirmed,
    /// Not owned here, or being handed back: send nothing more, hand queued
    /// work back, stop once nothing is in flight.
    NotOwned,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Under this epoch, taken (or last confirmed) at this instant.
    Owned(i64, Instant),
    Leaving,
}

#[derive(Debug)]
struct State {
    held: HashMap<String, Held>,
    confirmed_until: Option<Instant>,
}

#[derive(Debug)]
pub struct Leases {
    instance_id: String,
    ttl: Duration,
    state: RwLock<State>,
}

impl Leases {
    pub fn new(instance_id: String, ttl: Duration) -> Leases {
        Leases {
            instance_id,
            ttl,
            state: RwLock::new(State {
                held: HashMap::new(),
                confirmed_until: None,
            }),
        }
    }

    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn standing(&self, endpoint_id: &str) -> Standing {
        self.standing_at(endpoint_id, Instant::now())
    }

    fn standing_at(&self, endpoint_id: &str, now: Instant) -> Standing {
        let state = self.read();
        match state.held.get(endpoint_id) {
            Some(Held::Owned(epoch, _)) if state.confirmed_until.is_some_and(|t| now < t) => {
                Standing::Owned { epoch: *epoch }
            }
            Some(Held::Owned(..)) => Standing::Unconfirmed,
            Some(Held::Leaving) | None => Standing::NotOwned,
        }
    }

    /// Whether this instance owns the endpoint with its lease confirmed
    /// now: what sending, and handing work over in memory, need.
    pub fn confirmed(&self, endpoint_id: &str) -> bool {
        matches!(self.standing(endpoint_id), Standing::Owned { .. })
    }

    /// Whether an actor should run here for this endpoint.
    pub fn holds(&self, endpoint_id: &str) -> bool {
        matches!(self.read().held.get(endpoint_id), Some(Held::Owned(..)))
    }

    /// The endpoints owned here (not those being handed back).
    pub fn owned_count(&self) -> usize {
        self.read()
            .held
            .values()
            .filter(|h| matches!(h, Held::Owned(..)))
            .count()
    }

    /// After a heartbeat that began at `began`: these are all the endpoints
    /// owned here now, with their epochs, and `leaving` are on their way out.
    /// Endpoints taken after `began` are kept (the heartbeat read the rows
    /// before they were taken). Returns the endpoints that were held before
    /// and are not owned now.
    pub fn confirm(
        &self,
        began: Instant,
        owned: &[(String, i64)],
        leaving: &[String],
    ) -> Vec<String> {
        let mut state = self.write();
        let before = std::mem::take(&mut state.held);
        let mut held: HashMap<String, Held> = owned
            .iter()
            .map(|(id, epoch)| (id.clone(), Held::Owned(*epoch, began)))
            .chain(leaving.iter().map(|id| (id.clone(), Held::Leaving)))
            .collect();
        let mut lost = Vec::new();
        for (id, h) in before {
            match h {
                Held::Owned(epoch, since) if since > began && !held.contains_key(&id) => {
                    held.insert(id, Held::Owned(epoch, since));
                }
                Held::Owned(..) if !matches!(held.get(&id), Some(Held::Owned(..))) => lost.push(id),
                _ => {}
            }
        }
        state.held = held;
        state.confirmed_until = Some(began + self.ttl);
        lost
    }

    /// Endpoints just taken: owned under these epochs, confirmed like the
    /// rest (the take is itself a write that checked this instance's
    /// heartbeat).
    pub fn add(&self, taken: &[(String, i64)]) {
        let mut state = self.write();
        let now = Instant::now();
        for (id, epoch) in taken {
            state.held.insert(id.clone(), Held::Owned(*epoch, now));
        }
    }

    /// Endpoints handed back: no longer held here at all.
    pub fn forget(&self, handed: &[String]) {
        let mut state = self.write();
        for id in handed {
            state.held.remove(id);
        }
    }

    /// Everything is being handed back (a stop).
    pub fn leave_all(&self) {
        let mut state = self.write();
        for h in state.held.values_mut() {
            *h = Held::Leaving;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(15);

    #[test]
    fn nothing_is_owned_before_the_first_heartbeat() {
        let leases = Leases::new("ins_a".into(), TTL);
        assert_eq!(leases.standing("ep_1"), Standing::NotOwned);
    }

    #[test]
    fn a_confirmed_lease_is_trusted_for_one_ttl_after_its_heartbeat_began() {
        let leases = Leases::new("ins_a".into(), TTL);
        let began = Instant::now();
        leases.confirm(began, &[("ep_1".into(), 3)], &[]);
        assert_eq!(
            leases.standing_at("ep_1", began + TTL - Duration::from_millis(1)),
            Standing::Owned { epoch: 3 }
        );
        assert_eq!(
            leases.standing_at("ep_1", began + TTL),
            Standing::Unconfirmed
        );
    }

    #[test]
    fn an_endpoint_missing_from_the_next_confirmation_is_reported_lost() {
        let leases = Leases::new("ins_a".into(), TTL);
        let now = Instant::now();
        leases.confirm(now, &[("ep_1".into(), 1), ("ep_2".into(), 1)], &[]);
        let lost = leases.confirm(now, &[("ep_2".into(), 1)], &["ep_1".into()]);
        assert_eq!(lost, vec!["ep_1".to_string()]);
        assert_eq!(leases.standing("ep_1"), Standing::NotOwned);
        assert!(!leases.holds("ep_1"));
        assert_eq!(leases.owned_count(), 1);
    }

    #[test]
    fn an_endpoint_taken_while_a_heartbeat_read_is_kept() {
        let leases = Leases::new("ins_a".into(), TTL);
        let began = Instant::now();
        leases.confirm(began, &[], &[]);
        leases.add(&[("ep_new".into(), 4)]);
        let lost = leases.confirm(began, &[], &[]);
        assert!(lost.is_empty());
        assert_eq!(leases.standing("ep_new"), Standing::Owned { epoch: 4 });
    }

    #[test]
    fn leaving_all_stops_every_claim() {
        let leases = Leases::new("ins_a".into(), TTL);
        leases.confirm(Instant::now(), &[("ep_1".into(), 1)], &[]);
        leases.leave_all();
        assert_eq!(leases.standing("ep_1"), Standing::NotOwned);
    }
}
