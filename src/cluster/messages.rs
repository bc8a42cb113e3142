//! What the cluster actor and the fanout tell each other, kept apart so that
//! neither actor imports the other.

use actix::prelude::*;

/// To the cluster actor: this endpoint has work and no actor here, because
/// this instance does not hold it. Take it now if it is free and this
/// instance is its preferred owner (a new endpoint's first delivery should
/// not wait for the next heartbeat).
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct Consider(pub String);

/// To the fanout: leases taken and leases lost or being handed back (their
/// actors wind down).
#[derive(Message, Debug, Clone, Default)]
#[rtype(result = "()")]
pub struct LeasesChanged {
    /// Taken, each known to have work: start their actors.
    pub wake: Vec<String>,
    /// Taken in bulk (a heartbeat's take): look for which have work.
    pub look: bool,
    pub lost: Vec<String>,
}

/// To the cluster actor, at the end of a graceful stop: hand every lease back
/// and leave the cluster. Answers with the number of leases handed back.
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "Result<u64, String>")]
pub struct Leave;
