//! The health sweep: on a timer, and once at start, decides for every active
//! endpoint whether its warning, its disabling or its recovery is due, so an
//! endpoint that gets no attempts any more (its last delivery ran out of
//! retries) is still warned and disabled on time. Every instance sweeps; the
//! store's guarded updates make each transition, and its event, happen once.
//!
//! With each sweep it also looks for incidents (`incident_sweep`).
//!
//! On a shorter timer it also takes the minute's backlog sample for the
//! dashboard's charts (`store::samples`), unless another instance has.

use std::{sync::Arc, time::Duration};

use actix::prelude::*;
use sea_orm::TransactionTrait;

use super::{
    Shared,
    messages::{EndpointsDisabled, StopNow, Wake},
};
use crate::domain::health::{self, Due, Thresholds};
use crate::store::{
    StoreError,
    health::{self as stored, Changes},
    outbox, receiver_auth, samples,
};

/// How long before a client certificate expires its owner is told.
const CERTIFICATE_WARNING_MS: i64 = 14 * 24 * 3_600_000;

/// How often the sweep looks whether the current minute has its backlog
/// sample: well under a minute, so no minute is missed.
const SAMPLE_EVERY: Duration = Duration::from_secs(15);

/// Transitions written per transaction, so SQLite's one writer is not held
/// for long when many endpoints are due at once.
const PER_TRANSACTION: usize = 100;

pub struct HealthSweep {
    shared: Arc<Shared>,
    wake_fanout: Recipient<Wake>,
    disabled: Recipient<EndpointsDisabled>,
    /// A sweep is running: a tick that comes meanwhile is skipped.
    running: bool,
    /// A sample is being taken.
    sampling: bool,
    /// The last minute this instance saw sampled.
    sampled: Option<i64>,
    /// An outage of the database this instance is living through.
    outage: crate::domain::incident::Outage,
    /// Since when nothing delivered, if this instance started into a
    /// silence as long as `incidents.instances_down`; the first sweep tells.
    quiet: Option<i64>,
}

impl HealthSweep {
    pub fn new(
        shared: Arc<Shared>,
        wake_fanout: Recipient<Wake>,
        disabled: Recipient<EndpointsDisabled>,
        quiet: Option<i64>,
    ) -> HealthSweep {
        HealthSweep {
            quiet,
            shared,
            wake_fanout,
            disabled,
            running: false,
            sampling: false,
            sampled: None,
            outage: Default::default(),
        }
    }

    fn sample(&mut self, ctx: &mut Context<Self>) {
        let now = self.shared.clock.now_ms();
        let minute = samples::minute_of(now);
        if self.sampling || self.sampled == Some(minute) || self.shared.is_draining() {
            return;
        }
        self.sampling = true;
        let shared = self.shared.clone();
        let work = async move { take_sample(&shared, now).await };
        ctx.spawn(work.into_actor(self).map(move |res, act, _| {
            act.sampling = false;
            match res {
                Ok(()) => act.sampled = Some(minute),
                // The next tick tries again.
                Err(e) => tracing::warn!(error = %e, "taking the backlog sample failed"),
            }
        }));
    }

    fn sweep(&mut self, ctx: &mut Context<Self>) {
        if self.running || self.shared.is_draining() {
            return;
        }
        self.running = true;
        let shared = self.shared.clone();
        let (mut outage, mut quiet) = (self.outage, self.quiet);
        let work = async move {
            let began = shared.clock.now_ms();
            let changes = sweep(&shared).await;
            let notices =
                super::incident_sweep::sweep(&shared, began, &mut outage, &mut quiet).await;
            let stalled = stalled_subjects(&shared).await;
            (changes, stalled, notices, (outage, quiet))
        };
        ctx.spawn(work.into_actor(self).map(
            |(res, advanced, notices, (outage, quiet)), act, _| {
                act.running = false;
                act.outage = outage;
                act.quiet = quiet;
                if advanced > 0 || notices > 0 {
                    act.wake_fanout.do_send(Wake);
                }
                match res {
                    Ok(changes) => {
                        act.shared.metrics.health_sweeps.inc();
                        super::oncall::health_changed(&act.shared, &changes.events);
                        if !changes.events.is_empty() {
                            tracing::debug!(
                                events = changes.events.len(),
                                "health sweep announced endpoint transitions"
                            );
                            act.wake_fanout.do_send(Wake);
                        }
                        if !changes.disabled.is_empty() {
                            act.disabled.do_send(EndpointsDisabled(changes.disabled));
                        }
                    }
                    // The next tick tries again; nothing was half written.
                    Err(e) => tracing::warn!(error = %e, "the endpoint health sweep failed"),
                }
            },
        ));
    }
}

/// Subjects of ordered endpoints left with waiting deliveries and nothing
/// ahead of them (a head that closed on a path that does not advance its
/// subject, such as a paused delivery dying of age) move on. Returns how many.
async fn stalled_subjects(shared: &Shared) -> u64 {
    let now = shared.clock.now_ms();
    match crate::store::ordering::advance_stalled(&shared.db, now, 1_000).await {
        Ok(n) => {
            if n > 0 {
                tracing::info!(subjects = n, "ordered subjects with nothing ahead moved on");
            }
            n
        }
        Err(e) => {
            tracing::warn!(error = %e, "moving stalled ordered subjects on failed");
            0
        }
    }
}

/// One sweep: reads the candidates, decides what is due for each, and makes
/// the due transitions with their events, a chunk per transaction.
pub async fn sweep(shared: &Shared) -> Result<Changes, StoreError> {
    let now = shared.clock.now_ms();
    let e = &shared.config.endpoints;
    let t = Thresholds::new(e.warn_after, e.disable_after);
    let due: Vec<(String, Due)> = stored::to_sweep(&shared.db, t, now)
        .await?
        .into_iter()
        .filter_map(|(id, standing)| health::due(standing, now, t).map(|d| (id, d)))
        .collect();
    let mut changes = Changes::default();
    for chunk in due.chunks(PER_TRANSACTION) {
        match transition(shared, chunk, t, now).await {
            Ok(made) => {
                changes.events.extend(made.events);
                changes.disabled.extend(made.disabled);
            }
            Err(e) if changes.events.is_empty() => return Err(e),
            // What committed must still reach the fanout: report it, and
            // leave the rest to the next tick.
            Err(e) => {
                tracing::warn!(error = %e, "the endpoint health sweep stopped part way");
                break;
            }
        }
    }
    match certificate_notices(shared, now).await {
        Ok(events) => changes.events.extend(events),
        Err(e) => tracing::warn!(error = %e, "warning about expiring client certificates failed"),
    }
    Ok(changes)
}

/// Tells the owners of client certificates that expire within 14 days,
/// once per certificate, with `endpoint.certificate_expiring`.
async fn certificate_notices(
    shared: &Shared,
    now: i64,
) -> Result<Vec<crate::domain::event::NewEvent>, StoreError> {
    let _turn = shared.write_turn().await;
    let txn = shared.db.begin().await?;
    let events = receiver_auth::warn_expiring(&txn, now, CERTIFICATE_WARNING_MS).await?;
    outbox::insert(&txn, &events, now).await?;
    txn.commit().await?;
    Ok(events)
}

/// Writes the backlog sample of the minute `now_ms` falls in, unless
/// another instance has, and deletes the samples the charts no longer show.
pub async fn take_sample(shared: &Shared, now_ms: i64) -> Result<(), StoreError> {
    let db = &shared.db;
    if samples::exists(db, samples::minute_of(now_ms)).await? {
        return Ok(());
    }
    let sample = samples::read(db, now_ms, shared.config.delivery.schedule.len()).await?;
    let _turn = shared.write_turn().await;
    // One transaction: whoever sees the new sample sees the old ones gone.
    let txn = db.begin().await?;
    samples::record(&txn, &sample).await?;
    samples::prune(&txn, now_ms).await?;
    txn.commit().await?;
    Ok(())
}

/// One transaction: the due transitions of `chunk` and their events.
async fn transition(
    shared: &Shared,
    chunk: &[(String, Due)],
    t: Thresholds,
    now: i64,
) -> Result<Changes, StoreError> {
    let mut made = Changes::default();
    let _turn = shared.write_turn().await;
    let txn = shared.db.begin().await?;
    for (id, due) in chunk {
        // Each update re-checks the state under the transaction: an instance
        // or a group commit that got there first leaves it a no-op.
        stored::make_due(&txn, id, *due, t, now, &mut made).await?;
    }
    outbox::insert(&txn, &made.events, now).await?;
    txn.commit().await?;
    Ok(made)
}

impl Actor for HealthSweep {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // Once now: after a stop longer than the thresholds, endpoints are
        // not left waiting for the first tick.
        self.sweep(ctx);
        ctx.run_interval(self.shared.config.endpoints.health_interval, |act, ctx| {
            act.sweep(ctx)
        });
        self.sample(ctx);
        ctx.run_interval(SAMPLE_EVERY, |act, ctx| act.sample(ctx));
    }
}

impl Handler<StopNow> for HealthSweep {
    type Result = ();
    fn handle(&mut self, _: StopNow, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
