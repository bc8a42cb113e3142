//! Owns the per-path counting: for each request path, the requests in flight (read, not yet fully
//! answered) now and at most, and how many came with each `webhook-id`; and the `Receiver`
//! methods that report them.

use std::collections::{BTreeMap, HashMap};

use super::{Receiver, Shared};

/// One request path's requests: in flight (read, not yet fully answered) now and at most, and
/// how many came with each `webhook-id`.
#[derive(Default)]
pub(super) struct PathTally {
    in_flight: usize,
    max_in_flight: usize,
    by_id: HashMap<String, usize>,
}

impl PathTally {
    /// Counts a request that has just been read on this path: one more in flight, and one more
    /// delivery of `webhook_id` if it came with one.
    pub(super) fn arrived(&mut self, webhook_id: Option<&str>) {
        self.in_flight += 1;
        self.max_in_flight = self.max_in_flight.max(self.in_flight);
        if let Some(id) = webhook_id {
            *self.by_id.entry(id.to_string()).or_default() += 1;
        }
    }
}

/// Ends a request's time in flight when it is answered, or its connection closes or is aborted.
pub(super) struct Answering<'a> {
    pub(super) shared: &'a Shared,
    pub(super) path: String,
    /// The request's place in the receiver's record.
    pub(super) index: usize,
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        let mut state = self.shared.state();
        if let Some(tally) = state.paths.get_mut(&self.path) {
            tally.in_flight -= 1;
        }
        if let Some(request) = state.received.get_mut(self.index) {
            request.answered = Some(std::time::Instant::now());
        }
    }
}

impl Receiver {
    /// The most requests any one path has had in flight at once (read in full, not yet answered
    /// in full): for an endpoint per path, the concurrency its sender kept to.
    pub fn max_in_flight_per_path(&self) -> usize {
        let state = self.shared.state();
        state
            .paths
            .values()
            .map(|t| t.max_in_flight)
            .max()
            .unwrap_or(0)
    }

    /// Per path, the most requests it has had in flight at once (for assertion messages).
    pub fn peak_in_flight(&self) -> BTreeMap<String, usize> {
        let state = self.shared.state();
        state
            .paths
            .iter()
            .map(|(p, t)| (p.clone(), t.max_in_flight))
            .collect()
    }

    /// How many requests each (path, `webhook-id`) pair got; requests without the header are not
    /// counted.
    pub fn deliveries(&self) -> HashMap<(String, String), usize> {
        let state = self.shared.state();
        let by_pair = state.paths.iter().flat_map(|(path, t)| {
            t.by_id
                .iter()
                .map(|(id, n)| ((path.clone(), id.clone()), *n))
        });
        by_pair.collect()
    }

    /// How many distinct (path, `webhook-id`) pairs have arrived: a cheap progress check.
    pub fn distinct_deliveries(&self) -> usize {
        self.shared
            .state()
            .paths
            .values()
            .map(|t| t.by_id.len())
            .sum()
    }
}
