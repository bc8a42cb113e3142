//! The endpoint actor's claims: how many deliveries to hold, claiming them
//! under the endpoint's lease, queueing them with their bodies, and handing
//! them back unattempted.

use std::{collections::HashMap, time::Duration};

use actix::prelude::*;

use super::{EndpointActor, MAX_CLAIM};
use crate::{
    delivery::attempt::Job,
    domain::{
        event::{NewEvent, envelope_for},
        hand_back::HandBack,
    },
    store::{self, claims::Claimed, cluster::Fence},
};

impl EndpointActor {
    pub(super) fn claim(&mut self, ctx: &mut Context<Self>, limit: u32) {
        self.claim_some(ctx, limit, false);
    }

    /// Claims one manual replay, and no scheduled work: what may go through
    /// an open circuit.
    pub(super) fn claim_replays(&mut self, ctx: &mut Context<Self>) {
        self.claim_some(ctx, 1, true);
    }

    fn claim_some(&mut self, ctx: &mut Context<Self>, limit: u32, replays_only: bool) {
        if limit == 0 {
            return;
        }
        self.claiming = true;
        self.woken = false;
        let start = self.rows_first.claim_starts();
        let shared = self.shared.clone();
        let id = self.id.clone();
        let (mut held_deliveries, mut held_replays) = self.due.held();
        let fence = Fence {
            instance_id: self.shared.leases.instance_id().to_string(),
            epoch: self.epoch,
            ttl_ms: self.shared.config.cluster.lease_ttl.as_millis() as i64,
        };
        let fut = async move {
            let now = shared.clock.now_ms();
            let lease_until = now + shared.config.delivery.lease.as_millis() as i64;
            let turn = shared.write_turn().await;
            // Every commit numbered by now is visible to the statements
            // below (on SQLite no commit runs while the turn is held).
            let seen = shared.behind.commits_finished();
            // Manual replays first: a partner is waiting for them.
            let mut claimed =
                store::claims::claim_replays(&shared.db, &id, &fence, now, lease_until, limit)
                    .await?;
            let room = if replays_only {
                0
            } else {
                limit - claimed.len() as u32
            };
            let scheduled = if room > 0 {
                let held = &held_deliveries;
                store::claims::claim_due(&shared.db, &id, &fence, (now, lease_until), held, room)
                    .await?
            } else {
                Vec::new()
            };
            let full = claimed.len() + scheduled.len() == limit as usize;
            if !full && !replays_only && start.nothing_unwritten() {
                // Nothing older is left due: fresh work may be handed over
                // again from the next commit on. (If a hand-back or rows of
                // an unseen commit came meanwhile, the actor keeps the mode
                // and hands such work back behind them.)
                shared.behind.set(&id, false);
            }
            // Deliveries past their window (an endpoint disabled for too
            // long, an event that waited in a backlog) are dead without
            // another attempt.
            let (expired, scheduled): (Vec<Claimed>, Vec<Claimed>) = scheduled
                .into_iter()
                .partition(|c| shared.retry.expired(c.window_from, now));
            if !expired.is_empty() {
                let ids: Vec<String> = expired.into_iter().map(|c| c.id).collect();
                store::claims::expire(&shared.db, &ids, now).await?;
                crate::delivery::oncall::expired(&shared, &id, &ids);
            }
            drop(turn);
            claimed.extend(scheduled);
            let ids: Vec<&str> = claimed.iter().map(|c| c.event_id.as_str()).collect();
            let events = if ids.is_empty() {
                Vec::new()
            } else {
                store::outbox::find(&shared.db, &ids).await?
            };
            let earliest = if full {
                None
            } else {
                for c in &claimed {
                    match &c.replay_id {
                        Some(r) => held_replays.push(r.clone()),
                        None => held_deliveries.push(c.id.clone()),
                    }
                }
                let due = store::claims::next_due(&shared.db, &id, &held_deliveries, &held_replays)
                    .await?;
                Some(due)
            };
            Ok::<_, store::StoreError>((claimed, events, earliest, seen))
        };
        ctx.spawn(fut.into_actor(self).map(move |res, act, ctx| {
            act.claiming = false;
            match res {
                Ok((claimed, events, earliest, seen)) => {
                    // A claim of replays alone says nothing of what is due.
                    if !replays_only {
                        act.rows_first.claim_ended(start, earliest.is_none(), seen);
                    }
                    act.shared.behind.set(&act.id, act.rows_first.on());
                    act.enqueue(claimed, events);
                    // A full claim may have left due rows behind, and a wake
                    // that arrived during it may announce rows it did not
                    // see: look again rather than wait.
                    match earliest {
                        Some(earliest) if !act.woken => act.due.found(earliest),
                        _ => act.due.unknown(),
                    }
                    act.pump(ctx);
                }
                Err(e) => {
                    tracing::warn!(endpoint = %act.id, error = %e, "claiming deliveries failed; retrying");
                    ctx.run_later(Duration::from_secs(1), |act, ctx| act.pump(ctx));
                }
            }
        }));
    }

    /// How many deliveries to hold at once: enough that claims are rare for a
    /// fast receiver, few enough that the last one starts well within its
    /// lease for a slow one (from the observed time per attempt).
    pub(super) fn claim_size(&self, cap: usize) -> usize {
        let window_ms = self.shared.window.sendable_ms() as f64 / 2.0;
        // Until an attempt was measured, assume the slowest: claims start small.
        let timeout_ms = self.shared.config.delivery.request_timeout.as_secs_f64() * 1000.0;
        let attempt_ms = self.attempt_ms.unwrap_or(timeout_ms);
        let fits = cap as f64 * window_ms / attempt_ms.max(1.0);
        (fits as usize).clamp(2 * cap, MAX_CLAIM.max(2 * cap))
    }

    pub(super) fn enqueue(&mut self, claimed: Vec<Claimed>, events: Vec<NewEvent>) {
        let by_id: HashMap<&str, &NewEvent> = events.iter().map(|e| (e.id.as_str(), e)).collect();
        let mut bodies: HashMap<(&str, Option<u32>), bytes::Bytes> = HashMap::new();
        for c in claimed {
            let Some(event) = by_id.get(c.event_id.as_str()) else {
                tracing::error!(delivery = %c.id, event = %c.event_id, "a claimed delivery has no event");
                continue;
            };
            let key = (event.id.as_str(), c.schema_version);
            let body = match bodies.get(&key) {
                Some(body) => body.clone(),
                None => {
                    let Some(bytes) = envelope_for(event, c.schema_version) else {
                        tracing::error!(delivery = %c.id, event = %c.event_id, version = ?c.schema_version, "a claimed delivery's rendition is missing");
                        continue;
                    };
                    let body = bytes::Bytes::from(bytes);
                    bodies.insert(key, body.clone());
                    body
                }
            };
            self.due.hold(&c);
            self.queue.push_back(Job::new(c, event, body));
        }
    }

    pub(super) fn release_queue(&mut self, ctx: &mut Context<Self>, due_at: i64, why: HandBack) {
        let jobs: Vec<Job> = self.queue.drain(..).collect();
        self.release(ctx, jobs, due_at, why);
    }

    /// Hands back queued deliveries whose leases no longer leave time for an
    /// attempt (they waited behind a slow receiver): sent now, one could go
    /// out again under a new claim. Released, they are claimed afresh, and
    /// with them the rest of the queue, which is younger.
    pub(super) fn release_stale(&mut self, ctx: &mut Context<Self>, now: i64) {
        // The queue is in claim order, so in order of lease end: the stale
        // ones are at its front, and the pump looks at one job when none is.
        let window = self.shared.window;
        let stale = self
            .queue
            .iter()
            .take_while(|j| !window.may_start(j.claimed.lease_until, now))
            .count();
        if stale > 0 {
            // The rest of the queue is younger than the stale ones: it goes
            // back too, so claims bring them all back oldest first.
            tracing::debug!(endpoint = %self.id, stale, released = self.queue.len(), "queued deliveries outlived their lease window");
            self.release_queue(ctx, now, HandBack::LeaseWindow);
        }
    }

    /// Keeps what one claim would hold (and at least one handover), handing
    /// back what was handed over beyond it (fresh events faster than the
    /// receiver): those wait as rows, not as leases running out in memory.
    pub(super) fn release_beyond(&mut self, ctx: &mut Context<Self>, cap: usize) {
        let keep = self
            .claim_size(cap)
            .max(crate::delivery::fresh::PER_ENDPOINT)
            .saturating_sub(self.in_flight);
        if self.queue.len() <= keep {
            return;
        }
        let extra: Vec<Job> = self.queue.drain(keep..).collect();
        let now = self.shared.clock.now_ms();
        self.release(ctx, extra, now, HandBack::BeyondClaim);
    }

    pub(super) fn release(
        &mut self,
        ctx: &mut Context<Self>,
        jobs: Vec<Job>,
        due_at: i64,
        why: HandBack,
    ) {
        if jobs.is_empty() {
            return;
        }
        self.shared.metrics.handed_back(why, jobs.len());
        for job in &jobs {
            self.due.unhold(&job.claimed);
        }
        let (replays, scheduled): (Vec<Job>, Vec<Job>) = jobs
            .into_iter()
            .partition(|j| j.claimed.replay_id.is_some());
        let claim = |j: Job, id: Option<String>| (id.unwrap_or(j.claimed.id), j.claimed.claim_seq);
        let ids: Vec<(String, i64)> = scheduled.into_iter().map(|j| claim(j, None)).collect();
        let replays: Vec<(String, i64)> = replays
            .into_iter()
            .map(|mut j| {
                let id = j.claimed.replay_id.take();
                claim(j, id)
            })
            .collect();
        self.due.at(due_at);
        self.rows_first
            .handing_back(due_at, self.shared.clock.now_ms());
        self.shared.behind.set(&self.id, self.rows_first.on());
        let shared = self.shared.clone();
        ctx.spawn(
            async move {
                let now = shared.clock.now_ms();
                let released = match store::claims::release(&shared.db, &ids, due_at, now).await {
                    Ok(()) => store::claims::release_replays(&shared.db, &replays, now).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = released {
                    tracing::warn!(error = %e, "releasing claimed deliveries failed; their lease brings them back");
                }
            }
            .into_actor(self)
            .map(|(), act, ctx| {
                act.rows_first.handed_back();
                act.pump(ctx);
            }),
        );
    }

    /// Queues a delivery claimed for this actor elsewhere (the next of an
    /// ordered subject, claimed when its head's record was committed), once
    /// its event is read: those that arrive while a read runs are read
    /// together by the next one. What cannot be read comes back with its lease.
    pub(super) fn take_claimed(&mut self, ctx: &mut Context<Self>, claimed: Claimed) {
        self.due.hold(&claimed);
        self.handed.push(claimed);
        if !self.reading_handed {
            self.read_handed(ctx);
        }
    }

    fn read_handed(&mut self, ctx: &mut Context<Self>) {
        if self.handed.is_empty() {
            return;
        }
        self.reading_handed = true;
        let handed = std::mem::take(&mut self.handed);
        let shared = self.shared.clone();
        let read = async move {
            let ids: Vec<&str> = handed.iter().map(|c| c.event_id.as_str()).collect();
            let events = store::outbox::find(&shared.db, &ids).await;
            (handed, events)
        };
        ctx.spawn(read.into_actor(self).map(|(handed, events), act, ctx| {
            act.reading_handed = false;
            for c in &handed {
                act.due.unhold(c);
            }
            match events {
                Ok(events) => act.enqueue(handed, events),
                Err(e) => {
                    tracing::warn!(endpoint = %act.id, deliveries = handed.len(), error = %e, "reading claimed deliveries' events failed; their leases bring them back");
                }
            }
            act.read_handed(ctx);
            act.pump(ctx);
        }));
    }

    /// The circuit closed (a replay went through it as its probe, before the
    /// cool-down ended): what was handed back behind it is due now.
    pub(super) fn bring_back_held(&mut self, ctx: &mut Context<Self>, now: i64) {
        let Some(until) = self.held_back_until.take() else {
            return;
        };
        if until <= now {
            return;
        }
        let shared = self.shared.clone();
        let id = self.id.clone();
        let forward = async move {
            if let Err(e) = store::claims::bring_forward(&shared.db, &id, now, until).await {
                tracing::warn!(endpoint = %id, error = %e, "deliveries held behind the circuit stay due at its old time");
            }
        };
        ctx.spawn(forward.into_actor(self).map(|(), act, ctx| {
            act.due.unknown();
            act.pump(ctx);
        }));
    }
}
