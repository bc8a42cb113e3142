//! One attempt from the endpoint actor's side: start it on a free place, and
//! when the receiver has answered, free the slot at once, decide the
//! delivery's next state, and hand the record to the recorder. The slot does
//! not wait for the record: the actor keeps sending while the group commit
//! runs, and what it holds stays held (and leased) until the record is durable.

use actix::prelude::*;

use super::EndpointActor;
use crate::{
    delivery::{
        attempt::{Job, attempt_record, next_state},
        client::Observed,
        messages::Record,
    },
    domain::{hand_back::HandBack, outcome::Outcome, subscription::qualifies},
    store::deliveries::NextState,
};

impl EndpointActor {
    pub(super) fn start_attempt(&mut self, ctx: &mut Context<Self>) {
        let Some(job) = self.queue.pop_front() else {
            return;
        };
        let Some(loaded) = self.loaded.clone() else {
            return;
        };
        self.in_flight += 1;
        self.shared.activity.request_started();
        let shared = self.shared.clone();
        let resolver = self.resolver.clone();
        let slot = self.client.clone();
        let started_at = shared.clock.now_ms();
        self.last_sent_at = started_at;
        // Where this attempt goes, kept with its record: settings reloaded
        // while it is in flight do not change where it went.
        let sent_to = loaded.endpoint.url.clone();
        let attempt = async move {
            let observed =
                crate::delivery::traced::attempt(&shared, &resolver, &slot, &loaded, &job).await;
            (observed, job)
        };
        ctx.spawn(
            attempt
                .into_actor(self)
                .map(move |(observed, job), act, ctx| {
                    act.in_flight -= 1;
                    act.shared.activity.request_ended();
                    match observed {
                        Some(observed) => act.finish(ctx, observed, job, (started_at, &sent_to)),
                        None => {
                            let now = act.shared.clock.now_ms();
                            act.release(ctx, vec![job], now, HandBack::LeaseLost);
                        }
                    }
                    act.pump(ctx);
                }),
        );
    }

    /// Looks at the job at the front of the queue before the circuit and the
    /// rate limit are asked (a probe must be a real attempt): one that no
    /// longer qualifies for the endpoint (its event types were patched since
    /// the delivery was created) is cancelled, never sent. Settings loaded
    /// before the delivery was created may be the stale ones: reloaded first.
    /// `false` when the pump must stop for a reload.
    pub(super) fn cancel_unqualified(&mut self, ctx: &mut Context<Self>) -> bool {
        let Some(loaded) = self.loaded.clone() else {
            return false;
        };
        while let Some(job) = self.queue.front() {
            let Err(why) = qualifies(
                &loaded.endpoint.partner_id,
                &loaded.endpoint.event_types,
                &job.partner_id,
                &job.event_type,
            ) else {
                return true;
            };
            if loaded.at_ms < job.claimed.created_at {
                self.reload(ctx);
                return false;
            }
            if let Some(job) = self.queue.pop_front() {
                self.cancel(ctx, job, why.reason());
            }
        }
        true
    }

    /// Closes a job that no longer qualifies without sending it.
    fn cancel(&mut self, ctx: &mut Context<Self>, job: Job, reason: &'static str) {
        self.due.unhold(&job.claimed);
        tracing::info!(endpoint = %self.id, delivery = %job.claimed.id, event_type = %job.event_type, reason, "delivery cancelled before its attempt");
        self.shared.metrics.delivery_cancelled(reason);
        let shared = self.shared.clone();
        let now = shared.clock.now_ms();
        let job_ordered = job.claimed.ordered;
        let fut = async move {
            let c = &job.claimed;
            let (delivery, replay) = match &c.replay_id {
                Some(r) => (None, Some((r.as_str(), c.claim_seq))),
                None => (Some((c.id.as_str(), c.claim_seq)), None),
            };
            crate::store::claims::cancel(&shared.db, delivery, replay, reason, now).await
        };
        let ordered = job_ordered;
        ctx.spawn(fut.into_actor(self).map(move |res, act, ctx| {
            if let Err(e) = res {
                tracing::warn!(endpoint = %act.id, error = %e, "cancelling a delivery failed; its lease brings it back and it is checked again");
            } else if ordered {
                // The next delivery of its subject is due now.
                act.due.unknown();
                act.pump(ctx);
            }
        }));
    }

    /// Decides the delivery's next state and sends its record; what the
    /// record makes known (a retry time, a 410) is acted on once it is durable.
    /// `sent`: when the attempt started, and the URL it went to.
    fn finish(
        &mut self,
        ctx: &mut Context<Self>,
        observed: Observed,
        job: Job,
        (started_at, sent_to): (i64, &str),
    ) {
        let now = self.shared.clock.now_ms();
        let gone = observed.outcome == Outcome::Gone;
        let took_ms = observed.latency.as_secs_f64() * 1000.0;
        self.attempt_ms = Some(
            self.attempt_ms
                .map_or(took_ms, |avg| 0.9 * avg + 0.1 * took_ms),
        );
        let (failures_before, circuit_before) =
            (self.circuit.consecutive_failures(), self.circuit.state());
        match observed.outcome {
            Outcome::Delivered => self.circuit.on_success(),
            _ => self.circuit.on_failure(now),
        }
        // Once this attempt is durable (its delivery is no longer due).
        let closed = observed.outcome == Outcome::Delivered;
        let manual = job.claimed.replay_id.is_some();
        let next = next_state(
            &observed.outcome,
            manual,
            &self.shared.retry,
            job.claimed.scheduled_attempts + 1,
            job.claimed.window_from,
            now,
            &mut self.rng,
        );
        let record = attempt_record(
            (&self.id, Some(sent_to)),
            &job.claimed,
            &observed,
            started_at,
            next,
        );
        // The circuit goes to the endpoint row with the record, when it changed.
        let saved = self.circuit.save(now);
        let circuit = (self.saved != Some(saved)).then_some((self.epoch, saved));
        self.saved = Some(saved);
        tracing::debug!(endpoint = %self.id, delivery = %record.delivery_id, attempt = record.attempt_no, status = ?record.status_code, next = ?record.next, "attempt finished");
        crate::delivery::oncall::attempt_finished(
            &self.shared,
            &crate::delivery::oncall::Finished {
                endpoint_id: &self.id,
                partner_id: &job.partner_id,
                url: self.loaded.as_ref().map_or("", |l| l.endpoint.url.as_str()),
                delivery_id: &record.delivery_id,
                event_type: &job.event_type,
                attempt_no: record.attempt_no,
                outcome: &observed.outcome,
                status: observed.status,
                reason: record.error.as_ref().map(|(_, reason)| reason.as_str()),
                next: &record.next,
                failures_before,
                circuit_before,
                circuit_after: self.circuit.state(),
                failures_after: self.circuit.consecutive_failures(),
            },
        );
        self.shared.metrics.attempt(
            &observed.outcome,
            observed.latency,
            manual,
            matches!(record.next, NextState::Dead),
        );
        if observed.outcome == Outcome::Delivered && !manual {
            let since_created = (now - job.claimed.created_at).max(0) as f64 / 1000.0;
            self.shared.metrics.delivery_latency.observe(since_created);
        }
        let retry_at = match record.next {
            NextState::RetryAt(t) => Some(t),
            _ => None,
        };
        if gone {
            // Send nothing more on these settings: reload once recorded.
            self.loaded = None;
        }
        self.recording += 1;
        self.shared.activity.record_sent();
        let claimed = job.claimed;
        let written = self.recorder.send(Record {
            attempt: record,
            gone,
            circuit,
            lease_until: claimed.lease_until,
        });
        ctx.spawn(written.into_actor(self).map(move |res, act, ctx| {
            act.recording -= 1;
            act.shared.activity.record_done();
            act.due.unhold(&claimed);
            if let Ok(Ok(next)) = res {
                if let Some(t) = retry_at {
                    act.due.by(t);
                }
                // The next delivery of the subject, claimed for this actor
                // in the record's commit: sent without a claim.
                if let Some(next) = next {
                    act.take_claimed(ctx, next);
                }
            } else {
                // The row keeps its lease: look again, and the next claim
                // counts the lease's end as due.
                tracing::warn!(endpoint = %act.id, "an attempt was not recorded; its lease will retry it");
                act.due.unknown();
            }
            if gone {
                act.loaded = None;
            }
            if closed {
                let now = act.shared.clock.now_ms();
                act.bring_back_held(ctx, now);
            }
            act.pump(ctx);
        }));
    }
}
