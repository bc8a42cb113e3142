//! Nothing lost: a killed engine, a database that is not there at start, and a
//! database that goes away while the engine runs, a process paused while
//! the receiver answers.

mod disk_full;
mod disk_full_pg;
mod down_at_start;
mod kill;
pub(crate) mod outage;
mod pause;

use std::collections::HashMap;

use crate::harness::receiver::Receiver;

/// How many times each event id reached the receiver.
fn received_ids(receiver: &Receiver) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for r in receiver.received() {
        if let Some(id) = r.header("webhook-id") {
            *ids.entry(id.to_string()).or_default() += 1;
        }
    }
    ids
}
