//! Connection accounting at accept time: how many client connections are
//! open in all and from each address, and whether one more may come in.
//! A connection that comes in holds a `Ticket`; dropping it (the connection
//! closed) gives its place back.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex},
};

/// Why a connection was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The address already holds `max_connections_per_ip`.
    AddressFull,
    /// hookd already holds `max_connections`.
    ServerFull,
}

/// The caps one gate enforces.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    pub total: usize,
    pub per_address: usize,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
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

/// Shared by every worker thread: connections are counted across them.
#[derive(Debug, Clone)]
pub struct Gate {
    caps: Caps,
    counts: Arc<Mutex<Counts>>,
}

/// One admitted connection's place; released on drop.
#[derive(Debug)]
pub struct Ticket {
    address: IpAddr,
    counts: Arc<Mutex<Counts>>,
}

impl Gate {
    pub fn new(caps: Caps) -> Gate {
        Gate {
            caps,
            counts: Arc::default(),
        }
    }

    pub fn caps(&self) -> Caps {
        self.caps
    }

    /// Counts a new connection from `address` in, or says why not.
    pub fn admit(&self, address: IpAddr) -> Result<Ticket, Refusal> {
        let address = canonical(address);
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let from_address = counts.by_address.get(&address).copied().unwrap_or(0);
        admits(self.caps, counts.total, from_address)?;
        counts.total += 1;
        *counts.by_address.entry(address).or_insert(0) += 1;
        Ok(Ticket {
            address,
            counts: self.counts.clone(),
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.counts.lock().unwrap_or_else(|e| e.into_inner()).total
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.total = counts.total.saturating_sub(1);
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
    fn the_server_cap_holds_across_addresses() {
        let gate = Gate::new(CAPS);
        let _held: Vec<Ticket> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
            .iter()
            .map(|a| gate.admit(ip(a)).expect("under the cap"))
            .collect();
        assert_eq!(gate.admit(ip("10.0.0.4")).err(), Some(Refusal::ServerFull));
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
