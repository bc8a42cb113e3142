//! How busy this instance is, counted by the endpoint actors and reported
//! with each heartbeat: actors running, requests on the wire, and attempts
//! answered whose records are not yet durable.

use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Default)]
pub struct Activity {
    actors: AtomicUsize,
    in_flight: AtomicUsize,
    unrecorded: AtomicUsize,
    /// Told after each group commit: endpoints held back by the recorder's
    /// backlog look again.
    recorded: tokio::sync::Notify,
}

impl Activity {
    pub fn actors(&self) -> usize {
        self.actors.load(Ordering::Relaxed)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Attempts answered and handed to the recorder, not yet committed.
    pub fn unrecorded(&self) -> usize {
        self.unrecorded.load(Ordering::Relaxed)
    }

    pub fn record_sent(&self) {
        self.unrecorded.fetch_add(1, Ordering::Relaxed);
    }

    pub fn record_done(&self) {
        self.unrecorded.fetch_sub(1, Ordering::Relaxed);
    }

    /// A group commit finished.
    pub fn batch_recorded(&self) {
        self.recorded.notify_waiters();
    }

    /// Resolves at the next group commit.
    pub fn next_batch_recorded(&self) -> tokio::sync::futures::Notified<'_> {
        self.recorded.notified()
    }

    pub fn actor_started(&self) {
        self.actors.fetch_add(1, Ordering::Relaxed);
    }

    pub fn actor_stopped(&self) {
        self.actors.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    pub fn request_ended(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}
