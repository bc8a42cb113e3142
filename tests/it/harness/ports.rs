//! Ports for servers a test starts later (a receiver, a `hookd` child): the
//! URL is needed before the server binds, so the port is chosen first and
//! left free meanwhile. It is chosen below the kernel's ephemeral range,
//! where every `bind` to port 0 and every outgoing connection of the suite
//! takes its own port, so none of those can be handed it in that window;
//! and this process never hands out the same port twice.

use std::{
    collections::HashSet,
    hash::{BuildHasher as _, RandomState},
    net::TcpListener,
    sync::Mutex,
};

/// Where chosen ports start: above the well-known and most registered ones.
const LOWEST: u16 = 10_000;

/// The ports handed out by this process so far.
static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// The first port of the kernel's ephemeral range (Linux; its default
/// elsewhere).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A free TCP port on 127.0.0.1, not handed out before by this process.
pub fn free_port() -> u16 {
    let top = ephemeral_start();
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let given = given.get_or_insert_with(HashSet::new);
    if top > LOWEST + 1_000 {
        // Random per process (tests in other processes choose too).
        let seed = RandomState::new();
        for attempt in 0u32..2_000 {
            let port = LOWEST + (seed.hash_one(attempt) % u64::from(top - LOWEST)) as u16;
            if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                given.insert(port);
                return port;
            }
        }
    }
    // No room below the ephemeral range: any free port.
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port on 127.0.0.1")
            .port();
        if given.insert(port) {
            return port;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_free_below_the_ephemeral_range_and_never_handed_out_twice() {
        let ports: Vec<u16> = (0..50).map(|_| free_port()).collect();
        let distinct: HashSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len());
        for port in ports {
            assert!(port < ephemeral_start(), "{port} is in the ephemeral range");
            TcpListener::bind(("127.0.0.1", port)).expect("still free");
        }
    }
}
