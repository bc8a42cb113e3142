//! Connection accounting at accept time: how many client connections are
//! open in all and from each address, and whether one more may come in.
//!
//! Past the per-address cap a connection is refused. At the total cap a
//! connection is closed to make room, by one of two rules (`rule`):
//!
//! - a newcomer whose address holds less than its fair share (the total cap
//!   divided by the addresses holding connections, the newcomer's counted)
//!   closes at once the longest-waiting connection of the address holding
//!   the most: a crowd then competes with itself, never with a newcomer, so
//!   clients that reconnect every second cannot lock out a health check or
//!   a producer;
//! - any other newcomer closes the connection that has waited longest for
//!   an answer (a stalled head or body, an idle keep-alive), if it has
//!   waited at least `EVICT_AFTER`. Only when every connection is busy and
//!   young is the newcomer refused.
//!
//! A connection being closed holds its socket until it goes, so only a
//! quarter of the cap may be closing at once (`may_close`); the last half of
//! that room is kept for newcomers whose address holds at most half its
//! share, so a crowd's own churn never leaves none for them.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Open connections per address, those being closed too (they hold
    /// their sockets until they go).
    by_address: HashMap<IpAddr, usize>,
    /// Open connections per address that are not being closed: what the
    /// fair share is reckoned on.
    live: HashMap<IpAddr, usize>,
    slots: HashMap<u64, (IpAddr, Arc<Slot>)>,
}

impl Counts {
    /// One fewer live connection from `address`.
    fn unlive(&mut self, address: IpAddr) {
        if let Some(n) = self.live.get_mut(&address) {
            *n -= 1;
            if *n == 0 {
                self.live.remove(&address);
            }
        }
    }
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

/// Whose connection makes room for a newcomer when hookd is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The newcomer's address holds less than its fair share: the
    /// longest-waiting connection of this address, which holds the most,
    /// is closed at once.
    Heaviest(IpAddr),
    /// The longest-waiting connection of all, once it has waited
    /// `EVICT_AFTER`.
    LongestWaiting,
}

/// The places each address may count on when `addresses` share `total`.
pub fn fair_share(total: usize, addresses: usize) -> usize {
    total / addresses.max(1)
}

/// What the newcomer's address holds, and its fair share: the total cap
/// divided by the addresses holding connections, the newcomer's counted.
fn standing(held: &HashMap<IpAddr, usize>, newcomer: IpAddr, total: usize) -> (usize, usize) {
    let own = held.get(&newcomer).copied().unwrap_or(0);
    let addresses = held.len() + usize::from(own == 0);
    (own, fair_share(total, addresses))
}

/// Whether the newcomer's address holds at most half its fair share.
pub fn is_light(held: &HashMap<IpAddr, usize>, newcomer: IpAddr, total: usize) -> bool {
    let (own, share) = standing(held, newcomer, total);
    own * 2 <= share
}

/// Most connections being closed at once for a cap of `total`.
pub fn max_closing(total: usize) -> usize {
    total / 4 + 1
}

/// Whether one more connection may be closed for a newcomer while `closing`
/// are already being closed: a `light` newcomer may use all the room, any
/// other only its first half.
pub fn may_close(total: usize, closing: usize, light: bool) -> bool {
    let room = max_closing(total);
    closing < if light { room } else { room / 2 }
}

/// Which rule makes room for a newcomer from `newcomer`, given how many
/// connections each address holds (`held`, those being closed left out)
/// and the total cap. The heaviest address is the one holding the most;
/// among equals, the lowest address, so the choice is the same every time.
pub fn rule(held: &HashMap<IpAddr, usize>, newcomer: IpAddr, total: usize) -> Rule {
    let (own, share) = standing(held, newcomer, total);
    let heaviest = held
        .iter()
        .max_by_key(|&(address, n)| (*n, std::cmp::Reverse(*address)))
        .map(|(address, n)| (*address, *n));
    match heaviest {
        Some((address, n)) if own < share && n > share => Rule::Heaviest(address),
        _ => Rule::LongestWaiting,
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
    /// The client address it was admitted for.
    pub fn address(&self) -> IpAddr {
        self.address
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

    /// Counts a new connection from `address` in (closing another if hookd
    /// is full, by `rule`), or says why not.
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
            Err(Refusal::ServerFull)
                if may_close(
                    self.caps.total,
                    counts.evicting,
                    is_light(&counts.live, address, self.caps.total),
                ) =>
            {
                let (from, min_wait) = match rule(&counts.live, address, self.caps.total) {
                    Rule::Heaviest(heaviest) => (Some(heaviest), 0),
                    Rule::LongestWaiting => (None, EVICT_AFTER.as_millis() as u64),
                };
                let waiting = counts
                    .slots
                    .iter()
                    .filter(|(_, (a, s))| from.is_none_or(|f| f == *a) && !s.is_evicted())
                    .map(|(id, (_, s))| (*id, s.waiting_since.load(Ordering::Relaxed)));
                let id = victim(waiting, now_ms, min_wait).ok_or(Refusal::ServerFull)?;
                let Some((evicted, slot)) = counts.slots.get(&id).cloned() else {
                    return Err(Refusal::ServerFull);
                };
                slot.evict();
                counts.unlive(evicted);
                counts.evicting += 1;
            }
            Err(refusal) => return Err(refusal),
        }
        let id = counts.next_id;
        counts.next_id += 1;
        let slot = Arc::new(Slot::default());
        slot.answered(now_ms);
        counts.slots.insert(id, (address, slot.clone()));
        *counts.by_address.entry(address).or_insert(0) += 1;
        *counts.live.entry(address).or_insert(0) += 1;
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
        } else {
            counts.unlive(self.address);
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
mod tests;
