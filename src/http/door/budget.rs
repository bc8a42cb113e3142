//! How the process's files are shared between the listeners: half of the
//! file limit is for client connections (delivery's connections, the
//! database's and the files keep the other half), and within that half the
//! operations listener and the Unix socket each hold a budget of their own,
//! so a crowd on the public address can never spend it.

use super::gate::{self, Caps};

/// Connections the operations listener (`/healthz`, `/readyz`, `/metrics`)
/// holds at once: probes and scrapers, not clients.
pub const OPS_CONNECTIONS: usize = 32;

/// Connections the Unix domain socket holds at once: the producers on this
/// host.
pub const UNIX_CONNECTIONS: usize = 256;

/// The caps of each listener that is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    pub public: Caps,
    pub ops: Option<Caps>,
    pub unix: Option<Caps>,
}

/// Half of the process's file limit, after raising the soft limit to the
/// hard one as servers do; `None` if the limit cannot be read.
pub fn files_for_clients() -> Option<usize> {
    use rlimit::Resource;
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let (soft, _) = Resource::NOFILE.get().ok()?;
    Some(usize::try_from(soft / 2).unwrap_or(usize::MAX))
}

/// Shares `files` (client connections the process can hold; `None`:
/// unknown, so unbounded) between the listeners. The side listeners take
/// their budgets first (the Unix socket at most a quarter of `files`); the
/// public listener gets `max_connections` of the rest, and always at least
/// one. Every side listener is one address's worth: its cap per address is
/// its whole budget.
pub fn split(
    files: Option<usize>,
    max_connections: usize,
    per_address: usize,
    ops: bool,
    unix: bool,
) -> Budgets {
    let files = files.unwrap_or(usize::MAX);
    let whole = |total: usize| Caps {
        total: total.max(1),
        per_address: total.max(1),
    };
    let ops = ops.then(|| whole(OPS_CONNECTIONS.min(files / 8)));
    let unix = unix.then(|| whole(UNIX_CONNECTIONS.min(files / 4)));
    let taken = [ops, unix].iter().flatten().map(|c| c.total).sum::<usize>();
    let public = Caps {
        total: max_connections.min(files.saturating_sub(taken)).max(1),
        per_address,
    };
    Budgets { public, ops, unix }
}

/// Sockets one gate may hold at once for its `cap` admitted connections:
/// those, the ones being closed to make room, the refused ones lingering,
/// and a few being refused.
pub fn sockets(cap: usize) -> usize {
    cap + gate::max_closing(cap) + gate::max_lingering(cap) + 32
}

impl Budgets {
    /// Sockets the server may hold at once over all its listeners, spread
    /// over `workers`. The acceptor stops taking sockets past this, so a
    /// flood can never run the process out of files between accept and
    /// refusal; every listener's budget is counted, so a flood on one
    /// never stops the acceptor for another.
    pub fn sockets_per_worker(&self, workers: usize) -> usize {
        let all: usize = [Some(self.public), self.ops, self.unix]
            .iter()
            .flatten()
            .map(|c| sockets(c.total))
            .sum();
        all.div_ceil(workers.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_listener_alone_gets_the_configured_cap_within_half_the_files() {
        let b = split(Some(512), 4096, 128, false, false);
        assert_eq!(b.public.total, 512);
        assert_eq!(b.public.per_address, 128);
        assert_eq!((b.ops, b.unix), (None, None));
        assert_eq!(split(Some(512), 100, 128, false, false).public.total, 100);
        assert_eq!(split(None, 4096, 128, false, false).public.total, 4096);
    }

    #[test]
    fn side_listeners_take_their_budgets_out_of_the_same_half() {
        let b = split(Some(512), 4096, 128, true, true);
        let ops = b.ops.expect("the operations listener is on");
        let unix = b.unix.expect("the Unix socket is on");
        assert_eq!(ops.total, OPS_CONNECTIONS);
        assert_eq!(unix.total, 128, "a quarter of the files at most");
        assert_eq!(b.public.total, 512 - 32 - 128);
        assert_eq!(
            ops.total + unix.total + b.public.total,
            512,
            "never more than the half for clients"
        );
        assert_eq!(unix.per_address, unix.total, "one address's worth");
    }

    #[test]
    fn every_listener_keeps_at_least_one_connection_on_a_tiny_limit() {
        let b = split(Some(3), 4096, 128, true, true);
        assert!(b.public.total >= 1 && b.ops.unwrap().total >= 1 && b.unix.unwrap().total >= 1);
    }

    #[test]
    fn the_acceptor_counts_every_listeners_sockets() {
        let alone = split(Some(512), 4096, 128, false, false);
        let all = split(Some(512), 4096, 128, true, true);
        assert_eq!(
            all.sockets_per_worker(2),
            (sockets(352) + sockets(32) + sockets(128)).div_ceil(2)
        );
        assert_eq!(alone.sockets_per_worker(2), sockets(512).div_ceil(2));
    }
}
