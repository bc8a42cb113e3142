//! What the engine's actors tell the fanout and the recorder, kept apart from
//! the actors so that none of them imports another: an actor holds a
//! `Recipient` of the messages it sends. The endpoint actor's own messages
//! are in `endpoint::messages`, the operator's report in `report`, and what
//! the cluster actor and the fanout tell each other in `cluster::messages`.

use actix::prelude::*;

use super::fresh::Handover;
use crate::{
    domain::circuit::Saved,
    store::{claims::Claimed, deliveries::AttemptRecord},
};

/// To the fanout: new events are committed; claim them now.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Wake;

/// To the fanout: another instance created deliveries for these endpoints;
/// wake those held here.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct WorkFor(pub Vec<String>);

/// To the fanout, from the committer: deliveries published with their
/// events. Claimed ones go to their actors as they are, the others' actors
/// are woken to claim.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Fresh(pub Handover);

/// To the fanout: an endpoint changed (settings, status, secrets); its actor
/// reloads it.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct EndpointChanged(pub String);

/// To the fanout: another instance changed an endpoint; its actor here, if
/// any, reloads it.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct ChangedElsewhere(pub String);

/// To the fanout, from the recorder and the health sweep: endpoints
/// disabled (410 or failing too long).
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct EndpointsDisabled(pub Vec<String>);

/// To the fanout: how many endpoint actors run now (the graceful stop waits
/// for none).
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "usize")]
pub struct RunningActors;

/// To any of the engine's actors: stop now (shutdown). In-flight work is
/// left to its lease.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopNow;

/// To the recorder, from an endpoint actor: record one attempt; answers once
/// it is committed, with the next delivery of its subject when the attempt
/// closed an ordered head and the next one was claimed for the actor.
#[derive(Message)]
#[rtype(result = "Result<Option<Claimed>, RecordLost>")]
pub struct Record {
    pub attempt: AttemptRecord,
    /// The receiver answered 410 Gone.
    pub gone: bool,
    /// The endpoint's circuit after this attempt, when it changed, with the
    /// lease epoch it was decided under.
    pub circuit: Option<(i64, Saved)>,
    /// When the claim the attempt was made under ends (see `Claimed`).
    pub lease_until: i64,
}

/// The recorder stopped before the record was written (the process is
/// shutting down); the delivery's lease brings it back.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the attempt record was not written before shutdown")]
pub struct RecordLost;
