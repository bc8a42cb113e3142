//! Several instances on one database: each endpoint is leased to one live
//! instance, whose actor alone claims and sends for it, so an endpoint's
//! concurrency cap, rate limit and circuit hold across the cluster.
//!
//! - `rendezvous`: who should own an endpoint (pure);
//! - `plan`: what an instance does with the leases it sees (pure);
//! - `leases`: this instance's leases as its actors read them;
//! - `actor`: the heartbeat, which renews, takes and hands back leases;
//! - `handover`: moving an endpoint between live instances without a stall;
//! - `messages`: what the cluster actor and the fanout tell each other.

pub mod actor;
pub mod handover;
pub mod leases;
pub mod messages;
pub mod plan;
pub mod rendezvous;

/// This instance's identity: its id, this host's name, the process id.
pub fn this_instance(
    id: &str,
    listen: &str,
    role: crate::domain::role::Role,
) -> crate::store::cluster::Instance {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into());
    crate::store::cluster::Instance {
        id: id.into(),
        host,
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").into(),
        listen: listen.into(),
        role,
    }
}
