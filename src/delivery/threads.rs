//! The threads the engine's busy actors run on. One actix arbiter per core
//! for the endpoint actors (and the ingest committer beside them): an
//! endpoint always lives on the same one, chosen by its id, so its actor keeps
//! its single-threaded state while the endpoints together use every core. The
//! recorder, the busiest single actor, has a thread of its own. The
//! supervisor and the cluster actor stay on the engine's thread.

use actix::{Arbiter, ArbiterHandle};

/// At most this many delivery threads, however many cores there are.
const MAX_THREADS: usize = 8;

pub struct Threads {
    arbiters: Vec<Arbiter>,
    recorder: Arbiter,
}

impl Threads {
    /// One thread per available core (at least one, at most `MAX_THREADS`).
    pub fn per_core() -> Threads {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Threads {
            arbiters: (0..cores.clamp(1, MAX_THREADS))
                .map(|_| Arbiter::new())
                .collect(),
            recorder: Arbiter::new(),
        }
    }

    /// The recorder's own thread.
    pub fn recorder(&self) -> ArbiterHandle {
        self.recorder.handle()
    }

    /// The thread an endpoint's actor runs on.
    pub fn for_endpoint(&self, endpoint_id: &str) -> ArbiterHandle {
        self.arbiters[thread_for(endpoint_id, self.arbiters.len())].handle()
    }

    /// The first thread, for work of its own beside some endpoints.
    pub fn first(&self) -> ArbiterHandle {
        self.arbiters[0].handle()
    }

    /// Stops every thread once the actors on it have stopped.
    pub fn stop(&self) {
        for arbiter in self.arbiters.iter().chain([&self.recorder]) {
            arbiter.stop();
        }
    }
}

/// Which of `n` threads an endpoint's actor runs on: the same one always,
/// spread evenly (FNV-1a of the id; ids are random, so any stable hash does).
pub fn thread_for(endpoint_id: &str, n: usize) -> usize {
    let hash = endpoint_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (hash % n.max(1) as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::thread_for;

    #[test]
    fn an_endpoint_always_runs_on_the_same_thread() {
        let id = "ep_01M8T9TNW3D8R12QEJRTCSGF45";
        assert_eq!(thread_for(id, 4), thread_for(id, 4));
    }

    #[test]
    fn endpoints_spread_over_the_threads() {
        let mut counts = [0usize; 4];
        for i in 0..4_000 {
            counts[thread_for(&format!("ep_{i:026}"), 4)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1_200).contains(&c)),
            "each of 4 threads gets about a quarter: {counts:?}"
        );
    }

    #[test]
    fn one_thread_takes_every_endpoint() {
        assert_eq!(thread_for("ep_x", 1), 0);
        assert_eq!(thread_for("ep_x", 0), 0);
    }
}
