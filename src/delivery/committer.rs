//! Group commit of fresh events. Ingest requests of a few events (the fast
//! path, `fresh::MAX_EVENTS`) do not each open a transaction: they queue
//! here, and every request that arrived while the last commit ran is stored,
//! fanned out and numbered in the feed by the next one, in one commit (one
//! statement on PostgreSQL, unless the group needs more: see `fresh`).
//! No timer waits for company: one request alone is committed at once, and
//! under load the commits grow instead of queueing one by one behind the feed
//! counter. Each request is answered once its commit is durable.
//!
//! All or nothing stays per request: if a group fails on a repeated id
//! (another request inserted one of its ids meanwhile, or a request repeats
//! a stored one), each of its requests is committed again on its own and
//! gets its own answer. Any other failure is every request's answer.

use std::sync::Arc;

use actix::prelude::*;
use tokio::sync::oneshot;

use super::{Shared, fresh, messages::Fresh};
use crate::{
    domain::event::NewEvent,
    store::{self, StoreError, fanout::Publication},
    telemetry::spans::{self, Publication as PublicationSpan},
};

/// The most events one group commit carries; more wait for the next.
const MAX_GROUP_EVENTS: usize = 128;

/// Store, publish and hand over these new events (none of them stored yet,
/// at most `fresh::MAX_EVENTS`); answers once they are committed.
#[derive(Message)]
#[rtype(result = "Result<(), StoreError>")]
pub struct Commit {
    pub events: Vec<NewEvent>,
    /// The request's clock reading: the events' `created_at`.
    pub now_ms: i64,
}

struct Waiting {
    commit: Commit,
    done: oneshot::Sender<Result<(), StoreError>>,
}

pub struct Committer {
    shared: Arc<Shared>,
    hand_over: Recipient<Fresh>,
    pending: Vec<Waiting>,
    committing: bool,
}

impl Committer {
    pub fn new(shared: Arc<Shared>, hand_over: Recipient<Fresh>) -> Committer {
        Committer {
            shared,
            hand_over,
            pending: Vec::new(),
            committing: false,
        }
    }

    fn flush(&mut self, ctx: &mut Context<Self>) {
        if self.committing || self.pending.is_empty() {
            return;
        }
        let mut events = 0;
        let take = self
            .pending
            .iter()
            .take_while(|w| {
                events += w.commit.events.len();
                events <= MAX_GROUP_EVENTS
            })
            .count()
            .max(1);
        let group: Vec<Waiting> = self.pending.drain(..take).collect();
        self.committing = true;
        let shared = self.shared.clone();
        let hand_over = self.hand_over.clone();
        let work = async move { commit_and_answer(&shared, &hand_over, group).await };
        ctx.spawn(work.into_actor(self).map(|unreachable, act, ctx| {
            act.committing = false;
            // The database is away: those who waited meanwhile hear so now,
            // instead of each waiting out the pool once more in turn.
            if let Some(e) = unreachable {
                for w in act.pending.drain(..) {
                    let _ = w.done.send(Err(StoreError::Db(e.clone())));
                }
            }
            act.flush(ctx);
        }));
    }
}

/// Commits the group; if it fails on a repeated id, each request alone.
/// Returns the error when the database could not be reached.
async fn commit_and_answer(
    shared: &Shared,
    hand_over: &Recipient<Fresh>,
    group: Vec<Waiting>,
) -> Option<sea_orm::DbErr> {
    let requests: Vec<&Commit> = group.iter().map(|w| &w.commit).collect();
    match commit(shared, &requests).await {
        Ok(committed) => {
            after_commit(shared, hand_over, committed);
            for w in group {
                let _ = w.done.send(Ok(()));
            }
        }
        // Not a repeated id: the same database would fail each alone too
        // (and keep every request waiting once per request).
        Err(StoreError::Db(e)) if !store::is_unique_violation(&e) => {
            for w in group {
                let _ = w.done.send(Err(StoreError::Db(e.clone())));
            }
            return store::is_unreachable(&e).then_some(e);
        }
        Err(e) if group.len() == 1 => {
            let _ = group.into_iter().next().map(|w| w.done.send(Err(e)));
        }
        Err(_) => {
            for w in group {
                let alone = [&w.commit];
                let result = commit(shared, &alone).await;
                let answer = result.map(|committed| after_commit(shared, hand_over, committed));
                let _ = w.done.send(answer);
            }
        }
    }
    None
}

/// [`commit_in`], with a publication span per event when telemetry is on.
async fn commit(shared: &Shared, requests: &[&Commit]) -> Result<Committed, StoreError> {
    let Some(tracer) = shared.telemetry.tracer() else {
        return commit_in(shared, requests).await;
    };
    let start = crate::telemetry::wall_now();
    let committed = commit_in(shared, requests).await;
    let failure = committed.as_ref().err().map(ToString::to_string);
    let events = requests
        .iter()
        .flat_map(|r| &r.events)
        .map(|e| PublicationSpan {
            event_id: e.id.as_str(),
            event_type: &e.event_type,
            partner_id: &e.partner_id,
            trace: e.trace.as_ref(),
        });
    spans::publications(tracer, events, start, failure.as_deref());
    committed
}

/// One commit: every request's events with their feed numbers, their
/// deliveries (those of endpoints held here created claimed) and the work
/// notice.
async fn commit_in(shared: &Shared, requests: &[&Commit]) -> Result<Committed, StoreError> {
    let mut turn = shared.write_turn().await;
    let stamped: Vec<(&NewEvent, i64)> = requests
        .iter()
        .flat_map(|r| r.events.iter().map(|e| (e, r.now_ms)))
        .collect();
    let now_ms = requests.iter().map(|r| r.now_ms).max().unwrap_or_default();
    let publication =
        fresh::store_and_publish(shared, turn.as_deref_mut(), &stamped, now_ms).await?;
    // Numbered before the turn is given up: a claim that holds the turn has
    // seen exactly the commits numbered by then (see `behind`).
    let number = shared.behind.committed();
    drop(turn);
    let events: Vec<NewEvent> = stamped.into_iter().map(|(e, _)| e.clone()).collect();
    Ok(Committed {
        publication,
        events,
        number,
    })
}

/// A group commit's events and what publishing them did.
struct Committed {
    publication: Publication,
    events: Vec<NewEvent>,
    /// Its number (`behind::Behind::committed`).
    number: u64,
}

fn after_commit(
    shared: &Shared,
    hand_over: &Recipient<Fresh>,
    Committed {
        publication,
        events,
        number,
    }: Committed,
) {
    shared.metrics.ingest_commits.inc();
    shared.metrics.events_ingested.inc_by(events.len() as u64);
    let fanout = &publication.fanout;
    let created = fanout.deliveries.values().sum::<usize>() + fanout.waiting;
    shared.metrics.deliveries_created.inc_by(created as u64);
    shared
        .metrics
        .deliveries_filtered(&publication.fanout.filtered);
    let mut handover = fresh::handover(publication, &events);
    handover.commit = number;
    hand_over.do_send(Fresh(handover));
}

impl Actor for Committer {
    type Context = Context<Self>;
}

impl Handler<Commit> for Committer {
    type Result = ResponseFuture<Result<(), StoreError>>;

    fn handle(&mut self, msg: Commit, ctx: &mut Context<Self>) -> Self::Result {
        let (done, answer) = oneshot::channel();
        self.pending.push(Waiting { commit: msg, done });
        self.flush(ctx);
        Box::pin(async move {
            answer.await.unwrap_or_else(|_| {
                Err(StoreError::Db(sea_orm::DbErr::Custom(
                    "the ingest committer stopped before this commit".into(),
                )))
            })
        })
    }
}
