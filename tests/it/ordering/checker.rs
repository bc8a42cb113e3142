//! A receiver that checks order per subject: every request names its
//! subject and its place in it (`data.subject`, `data.seq`). It fails the
//! first attempts of the events it is told to, and answers the rest 200;
//! afterwards it says whether any subject saw a request before the one
//! ahead of it was accepted, or an event again after a later one. An event
//! accepted twice (delivery is at least once: a crash between the answer
//! and its record sends it again) counts once.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use crate::harness::{
    lock_through_poison,
    receiver::{Received, Receiver, Reply},
};

#[derive(Default)]
struct Seen {
    /// Subject → every request's place, in arrival order, with whether it
    /// was accepted.
    requests: BTreeMap<u64, Vec<(u64, bool)>>,
    /// (subject, seq) → attempts so far.
    attempts: HashMap<(u64, u64), u32>,
    /// The events accepted at least once.
    accepted: HashSet<(u64, u64)>,
    /// Accepts of an event accepted before: redeliveries.
    repeats: usize,
}

pub(crate) struct OrderChecker {
    pub receiver: Receiver,
    seen: Arc<Mutex<Seen>>,
}

impl OrderChecker {
    /// Starts the receiver, answering each request after `delay`:
    /// `fails(subject, seq)` is how many first attempts of that event fail
    /// (500) before it is accepted.
    pub async fn start(
        delay: Duration,
        fails: impl Fn(u64, u64) -> u32 + Send + Sync + 'static,
    ) -> OrderChecker {
        let receiver = Receiver::start().await;
        let seen = Arc::new(Mutex::new(Seen::default()));
        let log = Arc::clone(&seen);
        receiver.answer_by(move |r: &Received| {
            let envelope: serde_json::Value = serde_json::from_slice(&r.body).ok()?;
            let subject = envelope["data"]["subject"].as_u64()?;
            let seq = envelope["data"]["seq"].as_u64()?;
            let mut seen = lock_through_poison(&log);
            let n = seen.attempts.entry((subject, seq)).or_default();
            *n += 1;
            let accept = *n > fails(subject, seq);
            seen.requests
                .entry(subject)
                .or_default()
                .push((seq, accept));
            if accept && !seen.accepted.insert((subject, seq)) {
                seen.repeats += 1;
            }
            let reply = Reply::status(if accept { 200 } else { 500 });
            Some(match delay.is_zero() {
                true => reply,
                false => Reply::Delay(delay, Box::new(reply)),
            })
        });
        OrderChecker { receiver, seen }
    }

    pub fn url(&self) -> String {
        self.receiver.url()
    }

    /// How many distinct events were accepted so far.
    pub fn accepted(&self) -> usize {
        lock_through_poison(&self.seen).accepted.len()
    }

    /// Waits until `n` distinct events were accepted (a redelivery counts
    /// once); the error gives each subject's count.
    pub async fn wait_accepted(&self, n: usize, timeout: Duration) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let accepted = self.accepted();
            if accepted >= n {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                let per_subject: BTreeMap<u64, usize> = self
                    .first_accepts()
                    .into_iter()
                    .map(|(s, a)| (s, a.len()))
                    .collect();
                return Err(format!(
                    "{accepted} of {n} events accepted within {timeout:?}; per subject: {per_subject:?}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Every subject's violations of the order: a request for an event
    /// before every event ahead of it was accepted, or for an event again
    /// after a later one was sent.
    pub fn violations(&self) -> Vec<String> {
        let seen = lock_through_poison(&self.seen);
        let mut out = Vec::new();
        for (subject, requests) in &seen.requests {
            // The next place the subject may see: the first not yet
            // accepted; and the furthest it has seen.
            let (mut next, mut furthest) = (0, 0);
            for (seq, accepted) in requests {
                if *seq > next {
                    out.push(format!(
                        "subject {subject}: event {seq} came before event {next} was accepted ({requests:?})"
                    ));
                    break;
                }
                if *seq < furthest {
                    out.push(format!(
                        "subject {subject}: event {seq} came again after event {furthest} ({requests:?})"
                    ));
                    break;
                }
                furthest = *seq;
                if *seq == next && *accepted {
                    next += 1;
                }
            }
        }
        out
    }

    /// The accepted places of each subject, in arrival order.
    pub fn accepted_in_order(&self) -> BTreeMap<u64, Vec<u64>> {
        let seen = lock_through_poison(&self.seen);
        seen.requests
            .iter()
            .map(|(s, r)| (*s, r.iter().filter(|(_, a)| *a).map(|(q, _)| *q).collect()))
            .collect()
    }

    /// Every request of `subject` as (place, accepted), in arrival order.
    pub fn requests(&self, subject: u64) -> Vec<(u64, bool)> {
        let seen = lock_through_poison(&self.seen);
        seen.requests.get(&subject).cloned().unwrap_or_default()
    }

    /// The accepted places of each subject in the order they were first
    /// accepted: a redelivery is not listed again.
    pub fn first_accepts(&self) -> BTreeMap<u64, Vec<u64>> {
        let mut accepted = self.accepted_in_order();
        for places in accepted.values_mut() {
            let mut once = HashSet::new();
            places.retain(|q| once.insert(*q));
        }
        accepted
    }

    /// How many accepts were of an event accepted before.
    pub fn repeats(&self) -> usize {
        lock_through_poison(&self.seen).repeats
    }

    /// The most requests in flight at once, across subjects.
    pub fn peak_in_flight(&self) -> usize {
        self.receiver.max_in_flight_per_path()
    }
}
