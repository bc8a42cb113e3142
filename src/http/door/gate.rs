//! Connection accounting at accept time: how many client connections are
//! open in all and from each address, and whether one more may come in.
//!
//! Past the per-address cap a connection is refused. At the total cap the
//! connection that has waited longest for an answer (a stalled head or body,
//! an idle keep-alive) is closed to make room, if it has waited at least
//! `EVICT_AFTER`: so a crowd of stalled connections from many addresses can
//! never lock out a health check or a producer. Only when every connection
//! is busy and young is the newcomer refused.
//!
//! A connection that comes in holds a `Ticket`; dropping it (the connection
//! closed) gives its place back.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use futures_util::task::AtomicWaker;

/// How long a connection must have waited before it may be closed to make
/// room: a normal request is answered well within this.
pub const EVICT_AFTER: Duration = Duration::from_secs(1);

/// Why a connection was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The address already holds `max_connections_per_ip`.
    AddressFull,
    /// hookd holds `max_connections`, all busy.
    ServerFull,
}

/// The caps one gate enforces.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    pub total: usize,
    pub per_address: usize,
}

/// One open connection, as its stream and the gate both see it.
#[derive(Debug, Default)]
pub struct Slot {
    /// Milliseconds (since the gate started) from which it has waited for an
    /// answer: its start, or its last response.
    waiting_since: AtomicU64,
    evicted: AtomicBool,
    waker: AtomicWaker,
}

impl Slot {
    /// The connection just answered a request.
    pub fn answered(&self, now_ms: u64) {
        self.waiting_since.store(now_ms, Ordering::Relaxed);
    }
    pub fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::Acquire)
    }
    /// Where the stream wants to be woken when it is evicted.
    pub fn register(&self, waker: &std::task::Waker) {
        self.waker.register(waker);
    }
    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.waker.wake();
    }
}

#[derive(Debug, Default)]
struct Counts {
    next_id: u64,
    evicting: usize,
    by_address: HashMap<IpAddr, usize>,
    slots: HashMap<u64, Arc<Slot>>,
}

/// Whether one more connection from an address with `from_address` open
/// ones fits, when `total` are open in all.
pub fn admits(caps: Caps, total: usize, from_address: usize) -> Result<(), Refusal> {
    if from_address >= caps.per_address {
        Err(Refusal::AddressFull)
    } else if total >= caps.total {
        Err(Refusal::ServerFull)
    } else {
        Ok(())
    }
}

/// The connection to close for a newcomer: the one waiting longest, if it
/// has waited at least `min_wait_ms`. Given `(id, waiting_since_ms)`.
pub fn victim(
    waiting: impl Iterator<Item = (u64, u64)>,
    now_ms: u64,
    min_wait_ms: u64,
) -> Option<u64> {
    waiting
        .min_by_key(|&(_, since)| since)
        .filter(|&(_, since)| now_ms.saturating_sub(since) >= min_wait_ms)
        .map(|(id, _)| id)
}

/// Most refused connections lingering at once for a cap of `total`: an
/// eighth of it, so refusals never eat the file budget.
pub fn max_lingering(total: usize) -> usize {
    (total / 8).clamp(1, 256)
}

/// Shared by every worker thread: connections are counted across them.
#[derive(Debug, Clone)]
pub struct Gate {
    caps: Caps,
    started: Instant,
    counts: Arc<Mutex<Counts>>,
    lingering: Arc<AtomicUsize>,
}

/// A refused connection lingering to drain; released on drop.
#[derive(Debug)]
pub struct Lingering(Arc<AtomicUsize>);

impl Drop for Lingering {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One admitted connection's place; released on drop.
#[derive(Debug)]
pub struct Ticket {
    id: u64,
    address: IpAddr,
    slot: Arc<Slot>,
    started: Instant,
    counts: Arc<Mutex<Counts>>,
}

impl Ticket {
    pub fn slot(&self) -> &Slot {
        &self.slot
    }
    /// Milliseconds since the gate started, the slot's clock.
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl Gate {
    pub fn new(caps: Caps) -> Gate {
        Gate {
            caps,
            started: Instant::now(),
            counts: Arc::default(),
            lingering: Arc::default(),
        }
    }

    /// A place for a refused connection to linger, if one is free.
    pub fn linger(&self) -> Option<Lingering> {
        let before = self.lingering.fetch_add(1, Ordering::AcqRel);
        let place = Lingering(self.lingering.clone());
        (before < max_lingering(self.caps.total)).then_some(place)
    }

    pub fn caps(&self) -> Caps {
        self.caps
    }

    /// Counts a new connection from `address` in (closing a long-waiting
    /// one if hookd is full), or says why not.
    pub fn admit(&self, address: IpAddr) -> Result<Ticket, Refusal> {
        let address = canonical(address);
        let now_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let from_address = counts.by_address.get(&address).copied().unwrap_or(0);
        // Connections being closed still hold their sockets until they go.
        let open = counts.slots.len();
        match admits(
            self.caps,
            open.saturating_sub(counts.evicting),
            from_address,
        ) {
            Ok(()) => {}
            Err(Refusal::ServerFull) if counts.evicting < self.caps.total / 4 + 1 => {
                let waiting = counts
                    .slots
                    .iter()
                    .filter(|(_, s)| !s.is_evicted())
                    .map(|(id, s)| (*id, s.waiting_since.load(Ordering::Relaxed)));
                let min_wait = EVICT_AFTER.as_millis() as u64;
                let id = victim(waiting, now_ms, min_wait).ok_or(Refusal::ServerFull)?;
                if let Some(slot) = counts.slots.get(&id) {
                    slot.evict();
                }
                counts.evicting += 1;
            }
            Err(refusal) => return Err(refusal),
        }
        let id = counts.next_id;
        counts.next_id += 1;
        let slot = Arc::new(Slot::default());
        slot.answered(now_ms);
        counts.slots.insert(id, slot.clone());
        *counts.by_address.entry(address).or_insert(0) += 1;
        Ok(Ticket {
            id,
            address,
            slot,
            started: self.started,
            counts: self.counts.clone(),
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.slots.len()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.slots.remove(&self.id);
        if self.slot.is_evicted() {
            counts.evicting = counts.evicting.saturating_sub(1);
        }
        if let Some(n) = counts.by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                counts.by_address.remove(&self.address);
            }
        }
    }
}

/// An IPv4 client reaching a dual-stack socket shows as `::ffff:a.b.c.d`;
/// it is the same client as `a.b.c.d`.
pub fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps {
        total: 3,
        per_address: 2,
    };

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn one_address_cannot_take_more_than_its_share() {
        let gate = Gate::new(CAPS);
        let _a = gate.admit(ip("10.0.0.1")).expect("first");
        let _b = gate.admit(ip("10.0.0.1")).expect("second");
        assert_eq!(gate.admit(ip("10.0.0.1")).err(), Some(Refusal::AddressFull));
        assert!(
            gate.admit(ip("10.0.0.2")).is_ok(),
            "another address still gets in"
        );
    }

    #[test]
    fn a_full_server_of_young_connections_refuses_the_newcomer() {
        let gate = Gate::new(CAPS);
        let _held: Vec<Ticket> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
            .iter()
            .map(|a| gate.admit(ip(a)).expect("under the cap"))
            .collect();
        assert_eq!(gate.admit(ip("10.0.0.4")).err(), Some(Refusal::ServerFull));
    }

    #[test]
    fn a_full_server_closes_the_longest_waiting_connection_for_a_newcomer() {
        let gate = Gate::new(CAPS);
        let held: Vec<Ticket> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
            .iter()
            .map(|a| gate.admit(ip(a)).expect("under the cap"))
            .collect();
        // The first two answered just now; the third has waited since it came.
        let later = held[0].now_ms() + EVICT_AFTER.as_millis() as u64 + 10;
        held[0].slot().answered(later);
        held[1].slot().answered(later);
        std::thread::sleep(EVICT_AFTER + Duration::from_millis(20));
        let newcomer = gate.admit(ip("10.0.0.4")).expect("room is made");
        assert!(held[2].slot().is_evicted(), "the stalled one is closed");
        assert!(!held[0].slot().is_evicted() && !held[1].slot().is_evicted());
        assert!(!newcomer.slot().is_evicted());
        drop(held);
        assert_eq!(gate.open(), 1, "every place but the newcomer's came back");
    }

    #[test]
    fn the_victim_is_the_longest_waiting_and_only_if_it_waited_long_enough() {
        let waiting = [(1, 500), (2, 100), (3, 900)];
        assert_eq!(victim(waiting.into_iter(), 2_000, 1_000), Some(2));
        assert_eq!(victim(waiting.into_iter(), 1_050, 1_000), None);
        assert_eq!(victim(std::iter::empty(), 5_000, 1_000), None);
    }

    #[test]
    fn a_closed_connection_gives_its_place_back() {
        let gate = Gate::new(CAPS);
        let a = gate.admit(ip("10.0.0.1")).expect("first");
        let _b = gate.admit(ip("10.0.0.1")).expect("second");
        drop(a);
        assert_eq!(gate.open(), 1);
        assert!(gate.admit(ip("10.0.0.1")).is_ok());
    }

    #[test]
    fn an_ipv4_client_on_a_dual_stack_socket_is_counted_as_itself() {
        let gate = Gate::new(CAPS);
        let _a = gate.admit(ip("::ffff:10.0.0.1")).expect("first");
        let _b = gate.admit(ip("10.0.0.1")).expect("second");
        assert_eq!(
            gate.admit(ip("::ffff:10.0.0.1")).err(),
            Some(Refusal::AddressFull)
        );
    }
}
