//! What an endpoint actor is told, and by whom: the fanout wakes it, asks
//! it to reload, to drain, to stop or to report, and hears from it when it
//! is idle.

use actix::prelude::*;

use super::EndpointActor;
use crate::delivery::{
    attempt::Job,
    messages::StopNow,
    report::{ActorReport, Report},
};
use crate::domain::hand_back::HandBack;

/// Look for due work. `new_work`: the fanout just created deliveries.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Wake {
    pub new_work: bool,
    /// The supervisor's count of wakes sent to this actor (see `Idle`).
    pub seq: u64,
    /// The group commit that wrote rows for this actor to claim, if that
    /// is why it is woken (see `oldest_first`).
    pub committed: Option<u64>,
}

/// Told to the supervisor when the actor has nothing left to do.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct Idle {
    pub endpoint_id: String,
    /// The last wake this actor had seen: a later wake means new work raced in.
    pub seq: u64,
}

impl Handler<Wake> for EndpointActor {
    type Result = ();

    fn handle(&mut self, msg: Wake, ctx: &mut Context<Self>) {
        self.seq = msg.seq;
        if msg.new_work {
            self.due.unknown();
            self.woken = true;
        }
        if let Some(commit) = msg.committed {
            // Those rows are older than anything handed over after them.
            self.rows_first.rows_added(commit);
            self.shared.behind.set(&self.id, self.rows_first.on());
        }
        self.pump(ctx);
    }
}

/// Stop gracefully (the engine is stopping): claim nothing more, hand queued
/// work back, and stop once the attempts in flight are recorded.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Drain;

impl Handler<Drain> for EndpointActor {
    type Result = ();
    fn handle(&mut self, _: Drain, ctx: &mut Context<Self>) {
        self.pump(ctx);
    }
}

/// Forget cached settings and secrets; the next pump reloads them.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Reload;

impl Handler<Reload> for EndpointActor {
    type Result = ();
    fn handle(&mut self, _: Reload, ctx: &mut Context<Self>) {
        self.changes_seen += 1;
        self.loaded = None;
        self.pump(ctx);
    }
}

/// Deliveries claimed for this actor as they were published (see
/// `delivery::fresh`): hold them and send.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Take {
    pub jobs: Vec<Job>,
    /// As in `Wake`.
    pub seq: u64,
}

impl Handler<Take> for EndpointActor {
    type Result = ();
    fn handle(&mut self, msg: Take, ctx: &mut Context<Self>) {
        self.seq = msg.seq;
        let now = self.shared.clock.now_ms();
        // Deliveries of events already past their window (a backlog fanned
        // out late) go back as rows: the claim finds them dead, unsent.
        let (expired, jobs): (Vec<Job>, Vec<Job>) = msg
            .jobs
            .into_iter()
            .partition(|j| self.shared.retry.expired(j.claimed.window_from, now));
        self.release(ctx, expired, now, HandBack::Expired);
        if self.rows_first.on() {
            // Older deliveries wait as rows: these go behind them, and the
            // claims take them all in the database's order.
            self.release(ctx, jobs, now, HandBack::BehindOlder);
        } else {
            for job in jobs {
                self.due.hold(&job.claimed);
                self.queue.push_back(job);
            }
            let cap = self.concurrency();
            self.release_beyond(ctx, cap);
        }
        self.pump(ctx);
    }
}

impl Handler<StopNow> for EndpointActor {
    type Result = ();
    fn handle(&mut self, _: StopNow, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

impl Handler<Report> for EndpointActor {
    type Result = MessageResult<Report>;
    fn handle(&mut self, _: Report, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.report())
    }
}

impl EndpointActor {
    fn report(&self) -> ActorReport {
        let (circuit, open_until_ms) = ActorReport::circuit_from(self.circuit.state());
        ActorReport {
            endpoint_id: self.id.clone(),
            circuit,
            open_until_ms,
            consecutive_failures: self.circuit.consecutive_failures(),
            in_flight: self.in_flight,
            recording: self.recording,
            places: self.places(),
            concurrency: self.loaded.as_ref().map(|l| l.endpoint.concurrency),
            queued: self.queue.len(),
            next_due_ms: self.due.next(),
            rate_limit: self.rate_limit,
            attempt_ms: self.attempt_ms,
        }
    }
}
