//! The fanout actor: claims committed events in batches and turns them into
//! deliveries, and supervises the endpoint actors, starting one for each
//! endpoint with work, restarting any that died, and stopping idle ones.
//! Woken by ingest in process, and by a poll for rows other processes wrote.

use std::{collections::HashMap, sync::Arc, time::Duration};

use actix::prelude::*;

use super::{
    Shared,
    endpoint::{self, Drain, EndpointActor, Idle},
    messages::{
        ChangedElsewhere, EndpointChanged, EndpointsDisabled, Fresh, Record, RunningActors,
        StopNow, Wake, WorkFor,
    },
    report::{ActorReport, Report, ReportAll},
};
use crate::{
    cluster::messages::{Consider, LeasesChanged},
    egress::resolver::ResolverActor,
    store,
    telemetry::spans,
};

struct Child {
    addr: Addr<EndpointActor>,
    seq: u64,
}

pub struct FanoutActor {
    shared: Arc<Shared>,
    recorder: Recipient<Record>,
    /// The recorder stops with the fanout.
    stop_recorder: Recipient<StopNow>,
    resolver: Addr<ResolverActor>,
    cluster: Recipient<Consider>,
    threads: Arc<super::threads::Threads>,
    children: HashMap<String, Child>,
    claiming: bool,
    again: bool,
    failures: u32,
}

impl FanoutActor {
    pub fn new(
        shared: Arc<Shared>,
        recorder: Recipient<Record>,
        stop_recorder: Recipient<StopNow>,
        resolver: Addr<ResolverActor>,
        cluster: Recipient<Consider>,
        threads: Arc<super::threads::Threads>,
    ) -> FanoutActor {
        FanoutActor {
            shared,
            recorder,
            stop_recorder,
            resolver,
            cluster,
            threads,
            children: HashMap::new(),
            claiming: false,
            again: false,
            failures: 0,
        }
    }

    /// Wakes the endpoint's actor, starting (or restarting) it if needed.
    fn wake_child(&mut self, ctx: &mut Context<Self>, endpoint_id: &str, new_work: bool) {
        self.wake_child_for(ctx, endpoint_id, new_work, None);
    }

    /// As `wake_child`; `committed`: the group commit that wrote rows for it.
    fn wake_child_for(
        &mut self,
        ctx: &mut Context<Self>,
        endpoint_id: &str,
        new_work: bool,
        committed: Option<u64>,
    ) {
        let may_run = self.child(ctx, endpoint_id, false).is_some();
        // Rows a commit wrote are older than whatever the actor is handed
        // later: a running actor hears of them even while this instance's
        // hold on the lease is in doubt (it hands back if the lease is lost).
        let told = may_run || committed.is_some();
        if let Some(child) = self
            .children
            .get_mut(endpoint_id)
            .filter(|c| told && c.addr.connected())
        {
            child.seq += 1;
            child.addr.do_send(endpoint::Wake {
                new_work,
                seq: child.seq,
                committed,
            });
        }
    }

    /// The endpoint's running actor, started (or restarted) if needed. An
    /// endpoint this instance does not hold gets no actor here: its owner
    /// sends, or, if it is free, the cluster actor may take it.
    /// `handed`: work is handed to it in memory (see `delivery::fresh`), so a
    /// new actor need not claim first.
    fn child(
        &mut self,
        ctx: &mut Context<Self>,
        endpoint_id: &str,
        handed: bool,
    ) -> Option<&mut Child> {
        if self.shared.is_draining() {
            return None;
        }
        if !self.shared.leases.holds(endpoint_id) {
            self.cluster.do_send(Consider(endpoint_id.to_string()));
            return None;
        }
        let alive = self
            .children
            .get(endpoint_id)
            .is_some_and(|c| c.addr.connected());
        if !alive {
            let (id, shared) = (endpoint_id.to_string(), self.shared.clone());
            let (recorder, resolver) = (self.recorder.clone(), self.resolver.clone());
            let supervisor = ctx.address().recipient();
            let thread = self.threads.for_endpoint(endpoint_id);
            let addr = EndpointActor::start_in_arbiter(&thread, move |_| {
                let actor = EndpointActor::new(id, shared, recorder, resolver, supervisor);
                if handed {
                    actor.knowing_nothing_due()
                } else {
                    actor
                }
            });
            self.children
                .insert(endpoint_id.to_string(), Child { addr, seq: 0 });
        }
        self.children.get_mut(endpoint_id)
    }

    /// Claims batches until the outbox is drained, then wakes the endpoints
    /// that got deliveries.
    fn claim(&mut self, ctx: &mut Context<Self>) {
        if self.shared.is_draining() {
            return;
        }
        if self.claiming {
            self.again = true;
            return;
        }
        self.claiming = true;
        self.again = false;
        let shared = self.shared.clone();
        let fut = async move {
            let batch = shared.config.delivery.fanout_batch;
            let tracer = shared.telemetry.tracer();
            let mut total = store::fanout::Fanout::default();
            loop {
                let started = tracer.map(|_| crate::telemetry::wall_now());
                let f = {
                    let mut turn = shared.write_turn().await;
                    store::fanout_claim::claim_batch(
                        &shared.db,
                        turn.as_deref_mut(),
                        &shared.catalog,
                        &shared.routes,
                        (batch, tracer.is_some()),
                        shared.clock.now_ms(),
                        shared.leases.instance_id(),
                    )
                    .await?
                };
                if let (Some(tracer), Some(start)) = (tracer, started) {
                    let events = f.published.iter().map(|e| spans::Publication {
                        event_id: &e.id,
                        event_type: &e.event_type,
                        partner_id: &e.partner_id,
                        trace: e.trace.as_ref(),
                    });
                    spans::publications(tracer, events, start, None);
                }
                total.events += f.events;
                total.rejected += f.rejected;
                total.waiting += f.waiting;
                for (reason, n) in f.filtered {
                    *total.filtered.entry(reason).or_default() += n;
                }
                for (endpoint, n) in f.deliveries {
                    *total.deliveries.entry(endpoint).or_default() += n;
                }
                if f.events + f.rejected < batch as usize {
                    return Ok::<_, store::StoreError>(total);
                }
            }
        };
        ctx.spawn(fut.into_actor(self).map(|res, act, ctx| {
            act.claiming = false;
            match res {
                Ok(f) => {
                    act.failures = 0;
                    let created = f.deliveries.values().sum::<usize>() + f.waiting;
                    act.shared.metrics.deliveries_created.inc_by(created as u64);
                    act.shared.metrics.events_rejected.inc_by(f.rejected as u64);
                    act.shared.metrics.deliveries_filtered(&f.filtered);
                    if f.events > 0 {
                        tracing::debug!(
                            events = f.events,
                            endpoints = f.deliveries.len(),
                            "fanned out"
                        );
                    }
                    for endpoint_id in f.deliveries.keys() {
                        act.wake_child(ctx, endpoint_id, true);
                    }
                    if act.again {
                        act.claim(ctx);
                    }
                }
                Err(e) => {
                    act.failures += 1;
                    let backoff = Duration::from_millis(100u64 << act.failures.min(6));
                    tracing::error!(error = %e, retry_in = ?backoff, "claiming events failed");
                    ctx.run_later(backoff, |act, ctx| act.claim(ctx));
                }
            }
        }));
    }

    /// The backstop: claim what other processes wrote, and make sure every
    /// endpoint with unfinished deliveries has a live actor.
    fn poll(&mut self, ctx: &mut Context<Self>) {
        self.claim(ctx);
        let shared = self.shared.clone();
        ctx.spawn(
            async move { store::endpoints::with_due_work(&shared.db, shared.clock.now_ms()).await }
                .into_actor(self)
                .map(|res, act, ctx| match res {
                    // Due work the actor may not know of (written by another
                    // process, or a dead instance's lease): claim now.
                    Ok(ids) => ids.iter().for_each(|id| act.wake_child(ctx, id, true)),
                    Err(e) => tracing::warn!(error = %e, "listing endpoints with work failed"),
                }),
        );
    }
}

impl FanoutActor {
    /// Deletes what is past its retention.
    fn sweep(&mut self, ctx: &mut Context<Self>) {
        let shared = self.shared.clone();
        let work = async move {
            let r = &shared.config.retention;
            let age = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
            let now = shared.clock.now_ms();
            let expired =
                store::paused::expire(&shared.db, now, age(shared.config.delivery.max_age)).await?;
            if expired > 0 {
                tracing::info!(
                    deliveries = expired,
                    "paused deliveries past delivery.max_age are dead"
                );
            }
            store::retention::sweep(&shared.db, now, age(r.deliveries), age(r.events)).await
        };
        ctx.spawn(work.into_actor(self).map(|res, _, _| match res {
            Ok((0, 0)) => {}
            Ok((deliveries, events)) => {
                tracing::info!(deliveries, events, "retention sweep deleted old rows")
            }
            Err(e) => tracing::warn!(error = %e, "retention sweep failed"),
        }));
    }
}

impl Actor for FanoutActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let me = self.shared.leases.instance_id().to_string();
        let hearer = super::notify::Hearer {
            wake: ctx.address().recipient(),
            work: ctx.address().recipient(),
            changed: ctx.address().recipient(),
        };
        ctx.spawn(super::notify::listen(self.shared.db.clone(), hearer, me).into_actor(self));
        self.poll(ctx);
        ctx.run_interval(self.shared.config.delivery.poll_interval, |act, ctx| {
            act.poll(ctx)
        });
        ctx.run_interval(self.shared.config.retention.sweep_interval, |act, ctx| {
            act.sweep(ctx)
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        for child in self.children.values() {
            child.addr.do_send(StopNow);
        }
        self.stop_recorder.do_send(StopNow);
    }
}

impl Handler<Drain> for FanoutActor {
    type Result = ();
    fn handle(&mut self, _: Drain, _: &mut Context<Self>) {
        for child in self.children() {
            child.do_send(Drain);
        }
    }
}

impl Handler<StopNow> for FanoutActor {
    type Result = ();
    fn handle(&mut self, _: StopNow, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

impl Handler<Wake> for FanoutActor {
    type Result = ();
    fn handle(&mut self, _: Wake, ctx: &mut Context<Self>) {
        self.claim(ctx);
    }
}

impl Handler<Idle> for FanoutActor {
    type Result = ();
    fn handle(&mut self, msg: Idle, _: &mut Context<Self>) {
        // Only stop the child if no wake raced past its report.
        if self
            .children
            .get(&msg.endpoint_id)
            .is_some_and(|c| c.seq == msg.seq)
            && let Some(child) = self.children.remove(&msg.endpoint_id)
        {
            child.addr.do_send(StopNow);
        }
    }
}

impl Handler<Fresh> for FanoutActor {
    type Result = ();
    fn handle(&mut self, msg: Fresh, ctx: &mut Context<Self>) {
        let super::fresh::Handover {
            jobs,
            to_claim,
            commit,
        } = msg.0;
        let mut orphans: Vec<(String, i64)> = Vec::new();
        for (endpoint_id, jobs) in jobs {
            let more = to_claim.contains(&endpoint_id);
            match self.child(ctx, &endpoint_id, !more) {
                Some(child) => {
                    // Counts as a wake: an idle report sent before it is stale.
                    child.seq += 1;
                    child.addr.do_send(endpoint::Take {
                        jobs,
                        seq: child.seq,
                    });
                }
                // The lease went between the commit and now: hand them back.
                None => orphans.extend(
                    jobs.into_iter()
                        .map(|j| (j.claimed.id, j.claimed.claim_seq)),
                ),
            }
        }
        for endpoint_id in &to_claim {
            self.wake_child_for(ctx, endpoint_id, true, Some(commit));
        }
        if !orphans.is_empty() {
            let shared = self.shared.clone();
            let release = async move {
                let now = shared.clock.now_ms();
                if let Err(e) = store::claims::release(&shared.db, &orphans, now, now).await {
                    tracing::warn!(error = %e, "handing back fresh deliveries failed; their lease brings them back");
                }
            };
            ctx.spawn(release.into_actor(self));
        }
    }
}

impl Handler<WorkFor> for FanoutActor {
    type Result = ();
    fn handle(&mut self, msg: WorkFor, ctx: &mut Context<Self>) {
        for id in &msg.0 {
            if self.shared.leases.holds(id) {
                self.wake_child(ctx, id, true);
            }
        }
    }
}

impl Handler<LeasesChanged> for FanoutActor {
    type Result = ();
    fn handle(&mut self, msg: LeasesChanged, ctx: &mut Context<Self>) {
        for id in &msg.wake {
            self.wake_child(ctx, id, true);
        }
        if msg.look {
            self.poll(ctx);
        }
        // An actor whose lease is gone notices at its next pump: make it now.
        for id in &msg.lost {
            if let Some(child) = self.children.get(id) {
                child.addr.do_send(endpoint::Wake {
                    new_work: false,
                    seq: child.seq,
                    committed: None,
                });
            }
        }
    }
}

impl Handler<EndpointsDisabled> for FanoutActor {
    type Result = ();
    fn handle(&mut self, msg: EndpointsDisabled, ctx: &mut Context<Self>) {
        self.shared
            .metrics
            .endpoints_disabled
            .inc_by(msg.0.len() as u64);
        for id in msg.0 {
            // `oncall` has said why, once, where the transition was made.
            tracing::debug!(endpoint = %id, "endpoint disabled; its actor winds down");
            if self.children.contains_key(&id) {
                self.wake_child(ctx, &id, false);
            }
        }
    }
}

impl Handler<EndpointChanged> for FanoutActor {
    type Result = ();
    fn handle(&mut self, msg: EndpointChanged, ctx: &mut Context<Self>) {
        if let Some(child) = self.children.get(&msg.0) {
            child.addr.do_send(endpoint::Reload);
        }
        self.wake_child(ctx, &msg.0, true);
        // Its owner may be another instance: tell it too.
        let shared = self.shared.clone();
        let tell = async move {
            let me = shared.leases.instance_id();
            if let Err(e) = store::fanout::announce_change(&shared.db, me, &msg.0).await {
                tracing::warn!(endpoint = %msg.0, error = %e, "telling the other instances of a changed endpoint failed; they reload it within a minute");
            }
        };
        ctx.spawn(tell.into_actor(self));
    }
}

impl Handler<ChangedElsewhere> for FanoutActor {
    type Result = ();
    fn handle(&mut self, msg: ChangedElsewhere, _: &mut Context<Self>) {
        if let Some(child) = self.children.get(&msg.0) {
            child.addr.do_send(endpoint::Reload);
        }
    }
}

impl FanoutActor {
    /// The endpoint actors running now.
    pub(super) fn children(&self) -> impl Iterator<Item = &Addr<EndpointActor>> {
        self.children
            .values()
            .map(|c| &c.addr)
            .filter(|a| a.connected())
    }
}

impl Handler<RunningActors> for FanoutActor {
    type Result = usize;
    fn handle(&mut self, _: RunningActors, _: &mut Context<Self>) -> usize {
        self.children().count()
    }
}

impl Handler<ReportAll> for FanoutActor {
    type Result = ResponseFuture<Vec<ActorReport>>;
    fn handle(&mut self, _: ReportAll, _: &mut Context<Self>) -> Self::Result {
        let asks: Vec<_> = self.children().map(|addr| addr.send(Report)).collect();
        Box::pin(async move {
            // An actor that stopped meanwhile has nothing to report.
            futures_util::future::join_all(asks)
                .await
                .into_iter()
                .filter_map(Result::ok)
                .collect()
        })
    }
}
