//! The cluster actor: every `cluster.lease_ttl / 3` it heartbeats (which
//! renews every lease this instance holds), reads who is alive and who holds
//! what, and acts on the plan: takes free endpoints and those of dead
//! instances (looking again the moment a silent peer's leases run out), and
//! hands endpoints over to a live newcomer preferred for them (`handover`).
//! The database is the truth; `Leases` is what the actors read of it.

use std::{collections::HashSet, sync::Arc, time::Instant};

use actix::prelude::*;

use sea_orm::DatabaseConnection;

use super::{
    leases::Leases,
    messages::{Consider, LeasesChanged, Leave},
    plan::{Membership, plan, recheck_in},
    rendezvous::preferred,
};
use crate::{
    config::ClusterConfig,
    domain::clock::SharedClock,
    store::{
        self,
        cluster::{Alive, Instance, LeaseRow, Load},
    },
};

/// Instances silent this long are forgotten (their leases were free long before).
const FORGET_AFTER_MS: i64 = 24 * 3_600_000;

/// What the cluster actor works with, given by the engine that runs it.
pub struct Node {
    /// The cluster's own small pool (see `store::connect_control`).
    pub control_db: DatabaseConnection,
    pub clock: SharedClock,
    pub config: ClusterConfig,
    /// This instance's leases, which the cluster actor writes and the
    /// engine's actors read.
    pub leases: Arc<Leases>,
    /// How busy the engine is now, and whether it is stopping: told with
    /// each heartbeat.
    pub load: Box<dyn Fn() -> Load + Send + Sync>,
}

impl Node {
    fn is_draining(&self) -> bool {
        (self.load)().draining
    }
}

pub struct ClusterActor {
    pub(super) node: Arc<Node>,
    pub(super) instance: Instance,
    pub(super) fanout: Recipient<LeasesChanged>,
    ticking: bool,
    /// A look asked for while a heartbeat ran: run one more after it.
    again: bool,
    /// Since when heartbeats have succeeded without a gap.
    healthy_since: Option<Instant>,
    /// Who may own endpoints, as of the last heartbeat.
    candidates: Vec<String>,
    /// Endpoints a live instance other than this one holds.
    held_elsewhere: HashSet<String>,
    /// Endpoints being handed back.
    pub(super) leaving: HashSet<String>,
    /// Endpoints preferred here that a live instance is handing back.
    pub(super) awaited: Vec<String>,
    /// A handover step is running or scheduled.
    pub(super) handing_over: bool,
    /// Endpoints a `Consider` is taking now, or queued to.
    taking: HashSet<String>,
    /// Considered endpoints waiting for the next take.
    to_take: Vec<String>,
    take_running: bool,
    /// Endpoints considered before the first heartbeat knew the cluster.
    deferred: HashSet<String>,
    pub(super) stopping: bool,
}

/// What one heartbeat read.
struct Seen {
    began: Instant,
    alive: Vec<Alive>,
    leases: Vec<LeaseRow>,
}

impl ClusterActor {
    pub fn new(node: Arc<Node>, instance: Instance, fanout: Recipient<LeasesChanged>) -> Self {
        ClusterActor {
            node,
            instance,
            fanout,
            ticking: false,
            again: false,
            healthy_since: None,
            candidates: Vec::new(),
            held_elsewhere: HashSet::new(),
            leaving: HashSet::new(),
            awaited: Vec::new(),
            handing_over: false,
            taking: HashSet::new(),
            to_take: Vec::new(),
            take_running: false,
            deferred: HashSet::new(),
            stopping: false,
        }
    }

    pub(super) fn ttl_ms(&self) -> i64 {
        i64::try_from(self.node.config.lease_ttl.as_millis()).unwrap_or(i64::MAX)
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.ticking || self.stopping {
            return;
        }
        self.ticking = true;
        let node = self.node.clone();
        let instance = self.instance.clone();
        let ttl_ms = self.ttl_ms();
        let load = (node.load)();
        let read = async move {
            let began = Instant::now();
            if !store::cluster::heartbeat(&node.control_db, &instance.id, load).await? {
                tracing::warn!(instance = %instance.id, "this instance's row was gone (a long pause?); registering again");
                store::cluster::register(&node.control_db, &instance).await?;
            }
            // What outlives every instance's row: when one that delivers
            // was last alive (see `store::pulse`).
            if node.config.role.delivers() {
                store::pulse::beat(&node.control_db, node.clock.now_ms()).await?;
            }
            store::cluster::forget_dead(&node.control_db, FORGET_AFTER_MS).await?;
            let alive = store::cluster::alive(&node.control_db, ttl_ms).await?;
            let leases = store::cluster::leases(&node.control_db).await?;
            Ok::<_, store::StoreError>(Seen {
                began,
                alive,
                leases,
            })
        };
        ctx.spawn(read.into_actor(self).map(|res, act, ctx| match res {
            Ok(seen) => act.act_on(ctx, seen),
            Err(e) => {
                act.ticked(ctx);
                if act.healthy_since.take().is_some() {
                    tracing::warn!(error = %e, "the heartbeat failed; endpoints pause once the lease period passes without one");
                }
            }
        }));
    }

    /// A heartbeat out of turn: now, or right after the one running.
    fn look_again(&mut self, ctx: &mut Context<Self>) {
        if self.ticking {
            self.again = true;
        } else {
            self.tick(ctx);
        }
    }

    /// A heartbeat has finished.
    fn ticked(&mut self, ctx: &mut Context<Self>) {
        self.ticking = false;
        if std::mem::take(&mut self.again) {
            self.tick(ctx);
        }
    }

    fn act_on(&mut self, ctx: &mut Context<Self>, seen: Seen) {
        let me = self.instance.id.clone();
        let healthy_since = *self.healthy_since.get_or_insert(seen.began);
        let membership = Membership {
            me: me.clone(),
            alive: seen.alive.iter().map(|a| a.id.clone()).collect(),
            candidates: seen
                .alive
                .iter()
                .filter(|a| a.delivers && !(a.draining || (a.id == me && self.node.is_draining())))
                .map(|a| a.id.clone())
                .collect(),
            settled: seen.began.duration_since(healthy_since) >= self.node.config.lease_ttl,
        };
        let p = plan(&membership, &seen.leases);
        self.held_elsewhere = seen
            .leases
            .iter()
            .filter(|r| {
                r.owner
                    .as_ref()
                    .is_some_and(|o| *o != me && membership.alive.contains(o))
            })
            .map(|r| r.endpoint_id.clone())
            .collect();
        self.candidates = membership.candidates;
        for endpoint in std::mem::take(&mut self.deferred) {
            ctx.notify(Consider(endpoint));
        }
        self.leaving = p.hand_back.iter().cloned().collect();
        self.awaited = p.awaited;
        let others = seen.alive.iter().filter(|a| a.id != me).map(|a| a.age_ms);
        if let Some(soon) = recheck_in(others, self.ttl_ms(), self.node.config.heartbeat()) {
            ctx.run_later(soon, |act, ctx| act.look_again(ctx));
        }
        let lost = self.node.leases.confirm(seen.began, &p.keep, &p.hand_back);
        let node = self.node.clone();
        let ttl_ms = self.ttl_ms();
        let take = p.take;
        let act = async move {
            if take.is_empty() {
                return Ok(Vec::new());
            }
            store::cluster::take(&node.control_db, &me, &take, ttl_ms).await
        };
        ctx.spawn(act.into_actor(self).map(move |res, act, ctx| {
            match res {
                Ok(taken) => {
                    if !taken.is_empty() {
                        tracing::info!(taken = taken.len(), owned = act.node.leases.owned_count() + taken.len(), "endpoint leases changed hands");
                    }
                    act.node.leases.add(&taken);
                    act.fanout.do_send(LeasesChanged {
                        wake: Vec::new(),
                        look: !taken.is_empty(),
                        lost,
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "taking endpoint leases failed; trying at the next heartbeat");
                    act.fanout.do_send(LeasesChanged { lost, ..LeasesChanged::default() });
                }
            }
            act.handover(ctx);
            act.ticked(ctx);
        }));
    }
}

impl Actor for ClusterActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.tick(ctx);
        ctx.run_interval(self.node.config.heartbeat(), |act, ctx| act.tick(ctx));
    }
}

impl Handler<Consider> for ClusterActor {
    type Result = ();

    fn handle(&mut self, msg: Consider, ctx: &mut Context<Self>) {
        let endpoint = msg.0;
        let me = self.instance.id.clone();
        // Before the first heartbeat read the cluster, it is not known who
        // should own what: ask again once it has.
        if self.candidates.is_empty() && !self.stopping && !self.node.is_draining() {
            self.deferred.insert(endpoint);
            return;
        }
        if self.stopping
            || self.node.is_draining()
            || self.node.leases.holds(&endpoint)
            || self.held_elsewhere.contains(&endpoint)
            || self.taking.contains(&endpoint)
            || preferred(&self.candidates, &endpoint).is_some_and(|p| p != me)
        {
            return;
        }
        self.taking.insert(endpoint.clone());
        self.to_take.push(endpoint);
        self.take_considered(ctx);
    }
}

impl ClusterActor {
    /// Takes the considered endpoints' leases, all queued so far in one
    /// statement: thousands of new endpoints cost a few writes, not one each.
    fn take_considered(&mut self, ctx: &mut Context<Self>) {
        if self.take_running || self.to_take.is_empty() {
            return;
        }
        self.take_running = true;
        let ids = std::mem::take(&mut self.to_take);
        let node = self.node.clone();
        let me = self.instance.id.clone();
        let ttl_ms = self.ttl_ms();
        let asked = ids.clone();
        let take = async move { store::cluster::take(&node.control_db, &me, &ids, ttl_ms).await };
        ctx.spawn(take.into_actor(self).map(move |res, act, ctx| {
            act.take_running = false;
            for id in &asked {
                act.taking.remove(id);
            }
            match res {
                Ok(taken) => {
                    if !taken.is_empty() {
                        act.node.leases.add(&taken);
                    }
                    // Held by another instance after all: the next heartbeat says who.
                    for id in asked {
                        if !act.node.leases.holds(&id) {
                            act.held_elsewhere.insert(id);
                        }
                    }
                    if !taken.is_empty() {
                        act.fanout.do_send(LeasesChanged {
                            wake: taken.into_iter().map(|(e, _)| e).collect(),
                            ..LeasesChanged::default()
                        });
                    }
                }
                Err(e) => {
                    tracing::warn!(endpoints = asked.len(), error = %e, "taking endpoint leases failed")
                }
            }
            act.take_considered(ctx);
        }));
    }
}

impl Handler<Leave> for ClusterActor {
    type Result = ResponseActFuture<Self, Result<u64, String>>;

    fn handle(&mut self, _: Leave, _: &mut Context<Self>) -> Self::Result {
        self.stopping = true;
        self.node.leases.leave_all();
        let node = self.node.clone();
        let me = self.instance.id.clone();
        Box::pin(
            async move {
                store::cluster::leave(&node.control_db, &me)
                    .await
                    .map_err(|e| e.to_string())
            }
            .into_actor(self),
        )
    }
}
