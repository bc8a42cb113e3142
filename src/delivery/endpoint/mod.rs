//! One endpoint's actor: it claims the endpoint's due deliveries, keeps at
//! most `concurrency` requests on the wire (within its places in the
//! connection budget), owns the circuit breaker and the timer for the next due
//! delivery, and keeps sending while earlier attempts are being recorded, with
//! at most `MAX_RECORDING` records outstanding.

use std::{collections::VecDeque, rc::Rc, sync::Arc, time::Duration};

mod claims;
mod messages;
mod places;
mod send;

pub use messages::{Drain, Idle, Reload, Take, Wake};

use actix::prelude::*;
use rand::{SeedableRng, rngs::StdRng};

use super::{
    Shared,
    attempt::{ClientSlot, Job, Loaded},
    budget,
    due::{Due, Rest},
    messages::Record,
    oldest_first::RowsFirst,
    present::Presented,
};
use crate::{
    cluster::leases::Standing,
    domain::{
        circuit::{Circuit, CircuitState, Permit, Saved},
        hand_back::HandBack,
        token_bucket::TokenBucket,
    },
    egress::{resolver::ResolverActor, url_check::check_url},
    store::{self, endpoints::EndpointStatus},
};

/// The most deliveries an endpoint actor holds at once.
const MAX_CLAIM: usize = 256;
/// A sleep at least this long gives the places back (closing connections).
const LONG_SLEEP_MS: i64 = 1_000;
/// Attempts of one endpoint answered and not yet recorded, at most: sending
/// goes on while a group commit runs, so one endpoint's rate is this many per
/// commit, not its concurrency per commit.
const MAX_RECORDING: usize = 64;
/// Claims wait while this many attempts await their records, process-wide:
/// what cannot be recorded is not sent.
const MAX_UNRECORDED: usize = 4_096;
/// How long endpoint settings and secrets are trusted before a reload. A
/// change made through this instance reloads at once, and one made through
/// another instance on PostgreSQL is announced (`hookd_endpoint`); this is the
/// backstop for an announcement lost while the listener reconnected.
const RELOAD_AFTER_MS: i64 = 60_000;
/// The longest single timer (a day): beyond it the actor just looks again.
const MAX_SLEEP_MS: i64 = 86_400_000;

pub struct EndpointActor {
    id: String,
    shared: Arc<Shared>,
    recorder: Recipient<Record>,
    resolver: Addr<ResolverActor>,
    supervisor: Recipient<Idle>,
    loaded: Option<Rc<Loaded>>,
    circuit: Circuit,
    /// The circuit as last saved on the endpoint row; `None` until it was
    /// read from there (the first load).
    saved: Option<Saved>,
    /// The lease epoch this actor claims under (see `cluster::leases`).
    epoch: i64,
    /// Moving average of the time an attempt takes, in milliseconds, from
    /// the first measured attempt on; `None` before one.
    attempt_ms: Option<f64>,
    /// The endpoint's rate limit (requests per second) and its bucket.
    rate_limit: Option<u32>,
    rate: Option<TokenBucket>,
    queue: VecDeque<Job>,
    /// Requests on the wire.
    in_flight: usize,
    /// Attempts answered whose records are not yet durable.
    recording: usize,
    /// Places in the connection budget: one per socket the client may open.
    places: Vec<budget::Permit>,
    /// Waiting in line for a first place.
    asking: bool,
    /// A claim was made on the places held: under contention, the turn is over.
    turn_used: bool,
    /// Held back until the recorder's next group commit.
    awaiting_recorder: bool,
    /// When the last attempt started.
    last_sent_at: i64,
    /// Settings are being (re)loaded: nothing is sent meanwhile.
    reloading: bool,
    /// Counts the settings changes announced (`Reload`): a load that began
    /// before the latest one read settings that may be gone, and is thrown
    /// away for a new one.
    pub(super) changes_seen: u64,
    /// A claim is running; sending goes on meanwhile.
    claiming: bool,
    /// Deliveries claimed for this actor by the recorder (the next of their
    /// ordered subjects), waiting for their events to be read.
    handed: Vec<crate::store::claims::Claimed>,
    /// Those events are being read.
    reading_handed: bool,
    idle_timer: Option<SpawnHandle>,
    /// A wake arrived since the last claim started.
    woken: bool,
    /// Deliveries were handed back behind an open circuit, due then: they
    /// come forward if a replay closes the circuit sooner.
    held_back_until: Option<i64>,
    /// Oldest first: deliveries older than anything handed over from now on
    /// wait as rows (handed back behind a slow receiver), so handovers go
    /// back as rows behind them and claims take them in the database's
    /// order, until a claim finds nothing more due.
    rows_first: RowsFirst,
    /// What it holds and when work it does not hold next becomes due.
    due: Due,
    /// When the timer is set for, if it is.
    timer_at: Option<i64>,
    timer: Option<SpawnHandle>,
    client: ClientSlot,
    seq: u64,
    rng: StdRng,
}

impl EndpointActor {
    pub fn new(
        id: String,
        shared: Arc<Shared>,
        recorder: Recipient<Record>,
        resolver: Addr<ResolverActor>,
        supervisor: Recipient<Idle>,
    ) -> EndpointActor {
        let c = &shared.config.circuit;
        let circuit = Circuit::new(c.failure_threshold, c.cooldown_initial, c.cooldown_max);
        EndpointActor {
            id,
            recorder,
            resolver,
            supervisor,
            loaded: None,
            circuit,
            saved: None,
            epoch: 0,
            attempt_ms: None,
            rate_limit: None,
            rate: None,
            queue: VecDeque::new(),
            in_flight: 0,
            recording: 0,
            places: Vec::new(),
            asking: false,
            turn_used: false,
            awaiting_recorder: false,
            last_sent_at: 0,
            reloading: false,
            changes_seen: 0,
            claiming: false,
            handed: Vec::new(),
            reading_handed: false,
            idle_timer: None,
            woken: false,
            held_back_until: None,
            rows_first: RowsFirst::default(),
            due: Due::default(),
            timer_at: None,
            timer: None,
            client: ClientSlot::default(),
            seq: 0,
            rng: StdRng::from_os_rng(),
            shared,
        }
    }

    fn concurrency(&self) -> usize {
        self.loaded
            .as_ref()
            .map_or(1, |l| l.endpoint.concurrency.max(1) as usize)
    }

    /// The heart of the actor: reload if stale, send what the circuit and the
    /// cap allow, claim more when the queue runs low, sleep until the next due.
    fn pump(&mut self, ctx: &mut Context<Self>) {
        if self.shared.is_draining() {
            return self.wind_down(ctx);
        }
        if self.reloading {
            return;
        }
        let now = self.shared.clock.now_ms();
        match self.shared.leases.standing(&self.id) {
            Standing::Owned { epoch } => self.epoch = epoch,
            // Another instance holds it now, or is about to: hand back.
            Standing::NotOwned => return self.wind_down(ctx),
            // The lease was not confirmed lately (the database is away, or
            // this process was paused): send nothing until it is.
            Standing::Unconfirmed => return self.sleep_until(ctx, now + 500),
        }
        // An actor starts work (its first load, its claims) only with a place
        // in the connection budget: ten thousand endpoints with work take
        // turns at the database as they do at the network.
        if self.loaded.is_none() && !self.first_place(ctx) {
            return;
        }
        let stale = self
            .loaded
            .as_ref()
            .is_none_or(|l| now - l.at_ms > RELOAD_AFTER_MS);
        if stale {
            return self.reload(ctx);
        }
        let Some(loaded) = self.loaded.clone() else {
            return;
        };
        if loaded.endpoint.status != EndpointStatus::Active {
            return self.wind_down(ctx);
        }
        let cap = self.concurrency();
        self.grow_places(cap);
        // A claim waits for the hand-backs being written: it would take
        // younger rows before them (the write's end pumps again).
        let wants_claim = !self.claiming
            && !self.rows_first.writing()
            && !self.should_yield()
            && self.queue.len() < cap
            && self.due.rest(now) == Rest::Claim;
        if (wants_claim || !self.queue.is_empty()) && !self.first_place(ctx) {
            return;
        }
        let room =
            |act: &Self| act.in_flight < act.places().min(cap) && act.recording < MAX_RECORDING;
        while room(self) {
            // Each job is looked at as it comes to the front, before it is sent.
            self.release_stale(ctx, now);
            if !self.cancel_unqualified(ctx) {
                return;
            }
            if self.queue.is_empty() {
                break;
            }
            if let Some(bucket) = &mut self.rate
                && let Err(wait_ms) = bucket.take(now)
            {
                self.sleep_until(ctx, now + wait_ms);
                break;
            }
            let manual = self
                .queue
                .front()
                .is_some_and(|job| job.claimed.replay_id.is_some());
            let permit = if manual {
                self.circuit.permit_manual(now)
            } else {
                self.circuit.permit(now)
            };
            match permit {
                Permit::Send => self.start_attempt(ctx),
                Permit::Probe => {
                    self.start_attempt(ctx);
                    break;
                }
                Permit::Wait { until_ms } => {
                    // A replay waits only for the probe on the wire: look
                    // for it again as soon as that probe is answered.
                    self.woken |= self.queue.iter().any(|j| j.claimed.replay_id.is_some());
                    // Claimed work must not sit leased behind an open circuit.
                    self.release_queue(ctx, until_ms.unwrap_or(now), HandBack::CircuitOpen);
                    if let Some(t) = until_ms {
                        self.held_back_until = self.held_back_until.max(Some(t));
                        self.sleep_until(ctx, t);
                    }
                    return self.rest(ctx, now);
                }
            }
        }
        if let CircuitState::Open { until_ms } = self.circuit.state()
            && until_ms > now
        {
            // Manual replays go through an open circuit (as its probe): told
            // of new work, look for one.
            if self.woken && !self.claiming && !self.places.is_empty() {
                self.claim_replays(ctx);
            }
            self.sleep_until(ctx, until_ms);
            return self.rest(ctx, now);
        }
        if wants_claim && !self.places.is_empty() {
            if self.shared.activity.unrecorded() >= MAX_UNRECORDED {
                // The recorder is behind: send nothing more than it can write.
                self.wait_for_recorder(ctx);
            } else {
                let want = self.claim_size(self.places().min(cap));
                self.turn_used = true;
                self.claim(
                    ctx,
                    want.saturating_sub(self.in_flight + self.queue.len()) as u32,
                );
            }
        }
        if !self.claiming {
            self.rest(ctx, now);
        }
    }

    /// Pumps again after the recorder's next group commit.
    fn wait_for_recorder(&mut self, ctx: &mut Context<Self>) {
        if self.awaiting_recorder {
            return;
        }
        self.awaiting_recorder = true;
        let shared = self.shared.clone();
        let recorded = async move { shared.activity.next_batch_recorded().await };
        ctx.spawn(recorded.into_actor(self).map(|(), act, ctx| {
            act.awaiting_recorder = false;
            act.pump(ctx);
        }));
    }

    /// A new actor handed deliveries as they were published knows of no other
    /// due work: the supervisor's poll wakes it for any there is.
    pub fn knowing_nothing_due(mut self) -> Self {
        self.due.found(None);
        self
    }

    /// Between claims: a timer for the next due time, or, with nothing held
    /// and nothing known to become due, idling. With nothing on the wire or
    /// queued, a long sleep, an idle actor, or others waiting in line for the
    /// budget give the places (and the connections) back.
    fn rest(&mut self, ctx: &mut Context<Self>, now: i64) {
        let empty = self.queue.is_empty() && self.in_flight == 0;
        match self.due.rest(now) {
            Rest::Nothing if empty && self.recording == 0 => self.idle_soon(ctx),
            Rest::Until(t) => self.sleep_until(ctx, t),
            _ => {}
        }
        // Sleeping: a timer a second or more away, and nothing sent for a
        // second (an endpoint with steady traffic and one retry pending keeps
        // its connections).
        let long_sleep = self.timer_at.is_some_and(|t| t - now >= LONG_SLEEP_MS)
            && now - self.last_sent_at >= LONG_SLEEP_MS;
        if empty && (long_sleep || self.shared.budget.contended()) {
            self.give_back_places();
        }
    }

    pub(super) fn reload(&mut self, ctx: &mut Context<Self>) {
        self.reloading = true;
        let began_after = self.changes_seen;
        let shared = self.shared.clone();
        let id = self.id.clone();
        let first = self.saved.is_none();
        let before = self.loaded.clone();
        let fut = async move {
            let now = shared.clock.now_ms();
            let saved = if first {
                Some(store::endpoints::saved_circuit(&shared.db, &id).await?)
            } else {
                None
            };
            let endpoint = store::endpoints::find_for_delivery(&shared.db, &id).await?;
            let Some(endpoint) = endpoint else {
                return Ok(None);
            };
            let secrets =
                store::endpoints::signing_keys(&shared.db, &shared.secrets, &id, now).await?;
            let url = check_url(&endpoint.url, &shared.rules)
                .map_err(|e| format!("the callback URL {e}"));
            let credentials =
                store::receiver_auth::for_delivery(&shared.db, &shared.secrets, &id).await?;
            let before = before.as_ref().map(|l| &l.presented);
            let presented = Presented::new(credentials, &shared.trust, now, before);
            Ok::<_, store::StoreError>(Some((
                Loaded {
                    endpoint,
                    url,
                    secrets,
                    presented,
                    at_ms: now,
                },
                saved,
            )))
        };
        ctx.spawn(fut.into_actor(self).map(move |res, act, ctx| {
            act.reloading = false;
            if act.changes_seen != began_after {
                // Changed while it loaded (a secret expired, a header set).
                return act.reload(ctx);
            }
            match res {
                Ok(Some((loaded, saved))) => {
                    if let Some(saved) = saved {
                        // Where the last actor for this endpoint, here or on
                        // another instance, left the circuit.
                        act.circuit.resume(saved);
                        act.saved = Some(saved);
                    }
                    let limit = loaded.endpoint.rate_limit;
                    if limit != act.rate_limit {
                        act.rate_limit = limit;
                        act.rate = limit.map(|r| TokenBucket::new(r, r, loaded.at_ms));
                    }
                    act.loaded = Some(Rc::new(loaded));
                    act.pump(ctx);
                }
                Ok(None) => act.wind_down(ctx),
                Err(e) => {
                    tracing::warn!(endpoint = %act.id, error = %e, "loading the endpoint failed; retrying");
                    ctx.run_later(Duration::from_secs(1), |act, ctx| act.pump(ctx));
                }
            }
        }));
    }

    /// Nothing to do: stay for `delivery.idle_connection_timeout` (keeping
    /// the endpoint's kept-alive connections) and report idle to the
    /// supervisor, which stops the actor, if nothing came.
    fn idle_soon(&mut self, ctx: &mut Context<Self>) {
        if self.idle_timer.is_some() {
            return;
        }
        let grace = self.shared.config.delivery.idle_connection_timeout;
        self.idle_timer = Some(ctx.run_later(grace, |act, _| {
            act.idle_timer = None;
            if act.queue.is_empty()
                && act.in_flight == 0
                && act.recording == 0
                && !act.asking
                && !act.reloading
                && !act.claiming
                && act.handed.is_empty()
                && !act.reading_handed
                && act.due.rest(act.shared.clock.now_ms()) == Rest::Nothing
            {
                act.give_back_places();
                act.supervisor.do_send(Idle {
                    endpoint_id: act.id.clone(),
                    seq: act.seq,
                });
            }
        }));
    }

    /// Pumps again at `at_ms` (or earlier, if a timer is already set for
    /// earlier), then claims whatever is due by then.
    fn sleep_until(&mut self, ctx: &mut Context<Self>, at_ms: i64) {
        if self.timer.is_some() && self.timer_at.is_some_and(|t| t <= at_ms) {
            return;
        }
        if let Some(t) = self.timer.take() {
            ctx.cancel_future(t);
        }
        self.timer_at = Some(at_ms);
        // One timer for the whole wait (a retry may be hours away): waking
        // each minute to claim nothing would cost every backed-off endpoint
        // a claim a minute. The supervisor's poll still wakes the actor for
        // anything that becomes due meanwhile.
        let delay = (at_ms - self.shared.clock.now_ms()).clamp(0, MAX_SLEEP_MS) as u64;
        self.timer = Some(ctx.run_later(Duration::from_millis(delay), |act, ctx| {
            act.timer = None;
            act.timer_at = None;
            act.due.unknown();
            act.pump(ctx);
        }));
    }

    /// The endpoint is gone, paused or disabled: hand back queued work and stop
    /// once nothing is in flight.
    fn wind_down(&mut self, ctx: &mut Context<Self>) {
        let now = self.shared.clock.now_ms();
        self.release_queue(ctx, now, HandBack::Stopping);
        if self.in_flight == 0 && self.recording == 0 {
            ctx.stop();
        }
    }
}

impl Actor for EndpointActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.shared.activity.actor_started();
        self.pump(ctx);
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.shared.activity.actor_stopped();
        self.shared.behind.set(&self.id, false);
    }
}
