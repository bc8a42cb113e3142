//! The recorder: group commit of attempts. Endpoint actors send one record per
//! attempt and wait for it to be durable; records that arrive while a flush is
//! running are written together by the next one. A failing database is retried
//! with backoff, and nobody is told "done" before the rows are committed.
//!
//! Its queue is bounded from outside: an actor keeps at most 64 attempts
//! unrecorded, and no actor claims while the process
//! has `MAX_UNRECORDED` waiting. While records wait (a slow or absent
//! database), the recorder extends their claims' leases, so no other claim
//! takes a delivery whose attempt is already answered: a slow database slows
//! sending, and never turns into duplicates.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
    time::Duration,
};

use actix::prelude::*;
use tokio::sync::oneshot;

use super::{
    Shared,
    messages::{EndpointsDisabled, Record, RecordLost, StopNow, Wake},
};
use crate::domain::circuit::Saved;
use crate::store::claims::Claimed;
use crate::store::{
    self, StoreError,
    deliveries::{self, AttemptRecord, NextState},
    health::{self, Changes, Health, Thresholds},
    outbox,
};

/// A record waiting for its flush, with who waits for it.
struct Waiting {
    record: Record,
    /// Answered with the next delivery of the record's subject, when the
    /// record closed an ordered head and the next one was claimed for it.
    done: oneshot::Sender<Option<Claimed>>,
}

/// The claim an attempt was made under: the delivery, the replay if it was
/// one, and the claim's number.
type Claim = (String, Option<String>, i64);

fn claim_of(r: &AttemptRecord) -> Claim {
    (r.delivery_id.clone(), r.replay_id.clone(), r.claim_seq)
}

/// One record as the batch writes it: the attempt, whether the receiver
/// answered 410, and the circuit to save with it.
type ToWrite = (AttemptRecord, bool, Option<(i64, Saved)>);

pub struct Recorder {
    shared: Arc<Shared>,
    wake_fanout: Recipient<Wake>,
    disabled: Recipient<EndpointsDisabled>,
    pending: Vec<Waiting>,
    /// The claims of the batch being written, with when each lease ends.
    writing: Vec<(Claim, i64)>,
    flushing: bool,
    failures: u32,
}

impl Recorder {
    pub fn new(
        shared: Arc<Shared>,
        wake_fanout: Recipient<Wake>,
        disabled: Recipient<EndpointsDisabled>,
    ) -> Recorder {
        Recorder {
            shared,
            wake_fanout,
            disabled,
            pending: Vec::new(),
            writing: Vec::new(),
            flushing: false,
            failures: 0,
        }
    }

    fn flush(&mut self, ctx: &mut Context<Self>) {
        if self.flushing || self.pending.is_empty() {
            return;
        }
        self.flushing = true;
        let take = self
            .pending
            .len()
            .min(self.shared.config.delivery.record_batch);
        let batch: Vec<Waiting> = self.pending.drain(..take).collect();
        let shared = self.shared.clone();
        let records: Vec<ToWrite> = batch
            .iter()
            .map(|w| (w.record.attempt.clone(), w.record.gone, w.record.circuit))
            .collect();
        self.writing = batch
            .iter()
            .map(|w| (claim_of(&w.record.attempt), w.record.lease_until))
            .collect();
        // After a failed write, records may have landed without the answer
        // saying so: until a write succeeds, look before writing.
        let again = self.failures > 0;
        let write = async move { write_batch(&shared, &records, again).await };
        ctx.spawn(write.into_actor(self).map(move |result, act, ctx| {
            act.flushing = false;
            act.writing.clear();
            match result {
                Ok((changes, mut successors)) => {
                    act.failures = 0;
                    for w in batch {
                        let next = successors.remove(&w.record.attempt.delivery_id);
                        let _ = w.done.send(next);
                    }
                    act.shared.activity.batch_recorded();
                    super::oncall::health_changed(&act.shared, &changes.events);
                    if !changes.events.is_empty() {
                        act.wake_fanout.do_send(Wake);
                    }
                    if !changes.disabled.is_empty() {
                        act.disabled.do_send(EndpointsDisabled(changes.disabled));
                    }
                    act.flush(ctx);
                }
                Err(e) => {
                    // Put the batch back in front and try again later: the
                    // attempts happened, and their record must not be lost.
                    act.failures += 1;
                    let backoff = Duration::from_millis(100u64 << act.failures.min(6));
                    tracing::error!(error = %e, retry_in = ?backoff, records = batch.len(), "writing attempts failed");
                    let rest = std::mem::take(&mut act.pending);
                    act.pending = batch;
                    act.pending.extend(rest);
                    ctx.run_later(backoff, |act, ctx| act.flush(ctx));
                }
            }
        }));
    }
}

/// One transaction: the attempts, the deliveries' transitions, endpoint health
/// and any operational events it produced.
async fn write_batch(
    shared: &Shared,
    records: &[ToWrite],
    again: bool,
) -> Result<(Changes, HashMap<String, Claimed>), StoreError> {
    let now = shared.clock.now_ms();
    // The next delivery of an ordered subject is claimed in this commit for
    // the endpoints held here, as a claim would (the actor checks the lease
    // again before it sends).
    let lease_until = now + shared.config.delivery.lease.as_millis() as i64;
    let claim_until = |endpoint: &str| {
        let held = shared.leases.confirmed(endpoint);
        (held && !shared.is_draining()).then_some(lease_until)
    };
    let thresholds = Thresholds {
        warn_after_ms: shared.config.endpoints.warn_after.as_millis() as i64,
        disable_after_ms: shared.config.endpoints.disable_after.as_millis() as i64,
    };
    // Each endpoint's health is decided by its latest attempt in the batch.
    let mut by_endpoint: BTreeMap<&str, Health> = BTreeMap::new();
    // Each endpoint's circuit as its latest attempt in the batch left it.
    let mut circuits: BTreeMap<&str, (i64, Saved)> = BTreeMap::new();
    for (r, _, circuit) in records {
        if let Some(c) = circuit {
            circuits.insert(r.endpoint_id.as_str(), *c);
        }
    }
    for (r, gone, _) in records {
        let h = match (gone, r.next) {
            (true, _) => Health::Gone,
            (false, NextState::Delivered) => Health::Succeeded,
            (false, _) => Health::Failing,
        };
        let slot = by_endpoint
            .entry(r.endpoint_id.as_str())
            .or_insert(Health::Failing);
        if *slot != Health::Gone {
            *slot = h;
        }
    }
    let attempts: Vec<AttemptRecord> = records.iter().map(|(r, _, _)| r.clone()).collect();
    // The every-day batch: successes at endpoints that were not failing, no
    // circuit changed, written by one statement, which needs no transaction
    // of its own around it.
    let everyday = circuits.is_empty()
        && by_endpoint.values().all(|h| *h == Health::Succeeded)
        && store::record_at_once::fits(shared.db.get_database_backend(), &attempts, again);
    if everyday && let Some(recorded) = deliveries::record_alone(&shared.db, &attempts, now).await?
    {
        warn_superseded(recorded.superseded);
        return Ok((Changes::default(), recorded.successors));
    }
    let mut turn = shared.write_turn().await;
    let txn = store::writer::begin(&shared.db, turn.as_deref_mut()).await?;
    let recorded = deliveries::record(&txn, &attempts, now, again, &claim_until).await?;
    warn_superseded(recorded.superseded);
    let circuits: Vec<(&str, i64, Saved)> = circuits
        .into_iter()
        .map(|(e, (epoch, s))| (e, epoch, s))
        .collect();
    store::endpoints::save_circuits(&txn, &circuits).await?;
    let mut changes = Changes::default();
    // A success changes nothing for an endpoint that was not failing: ask
    // once which succeeded endpoints were, instead of writing each.
    let succeeded: Vec<&str> = by_endpoint
        .iter()
        .filter(|(_, h)| **h == Health::Succeeded)
        .map(|(e, _)| *e)
        .collect();
    let recovering = health::failing_among(&txn, &succeeded).await?;
    for (endpoint_id, h) in by_endpoint {
        if h == Health::Succeeded && !recovering.contains(endpoint_id) {
            continue;
        }
        health::apply(&txn, endpoint_id, h, thresholds, now, &mut changes).await?;
    }
    outbox::insert(&txn, &changes.events, now).await?;
    txn.commit().await?;
    Ok((changes, recorded.successors))
}

fn warn_superseded(records: usize) {
    if records > 0 {
        tracing::warn!(
            records,
            "attempts made under a claim that was superseded (this instance lost the endpoint's lease, or the delivery was deleted) were not recorded"
        );
    }
}

impl Recorder {
    /// Extends the leases of claims whose records still wait and whose
    /// leases would otherwise end before the next look, so that they are
    /// still held when the records land.
    fn extend_waiting(&mut self, ctx: &mut Context<Self>) {
        let window = self.shared.window;
        let now = self.shared.clock.now_ms();
        let claims: Vec<Claim> = self
            .pending
            .iter()
            .map(|w| (claim_of(&w.record.attempt), w.record.lease_until))
            .chain(self.writing.iter().cloned())
            .filter(|(_, until)| window.needs_extension(*until, now))
            .map(|(c, _)| c)
            .collect();
        if claims.is_empty() {
            return;
        }
        let (mut deliveries, mut replays) = (Vec::new(), Vec::new());
        for (delivery, replay, seq) in claims.iter().cloned() {
            match replay {
                Some(r) => replays.push((r, seq)),
                None => deliveries.push((delivery, seq)),
            }
        }
        let until = window.extended_until(now);
        let shared = self.shared.clone();
        let extend = async move {
            let _turn = shared.write_turn().await;
            store::claims::extend(&shared.db, &deliveries, &replays, until).await
        };
        ctx.spawn(extend.into_actor(self).map(move |res, act, _| {
            let n = claims.len();
            match res {
                Ok(()) => {
                    tracing::warn!(claims = n, "attempts wait to be recorded; their leases were extended");
                    let extended: std::collections::HashSet<Claim> = claims.into_iter().collect();
                    for w in &mut act.pending {
                        if extended.contains(&claim_of(&w.record.attempt)) {
                            w.record.lease_until = w.record.lease_until.max(until);
                        }
                    }
                    for (claim, lease_until) in &mut act.writing {
                        if extended.contains(claim) {
                            *lease_until = (*lease_until).max(until);
                        }
                    }
                }
                Err(e) => {
                    tracing::error!(error = %e, claims = n, "attempts wait to be recorded and their leases could not be extended")
                }
            }
        }));
    }
}

impl Actor for Recorder {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let every = self.shared.window.check_every();
        ctx.run_interval(every, |act, ctx| act.extend_waiting(ctx));
    }
}

impl Handler<Record> for Recorder {
    type Result = ResponseFuture<Result<Option<Claimed>, RecordLost>>;

    fn handle(&mut self, msg: Record, ctx: &mut Context<Self>) -> Self::Result {
        let (done, written) = oneshot::channel();
        self.pending.push(Waiting { record: msg, done });
        self.flush(ctx);
        Box::pin(async move { written.await.map_err(|_| RecordLost) })
    }
}

impl Handler<StopNow> for Recorder {
    type Result = ();
    fn handle(&mut self, _: StopNow, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
