//! The partners this process found to exist lately, so that ingest does not
//! ask the database about the same partner on every request. A partner found
//! is held for `access::HELD_FOR`; one announced gone (`hookd_access`) is
//! forgotten at once, one removed any other way when its entry expires. An
//! unknown partner is never held: one made a moment ago elsewhere is found
//! by the next request's look-up.

use std::{
    collections::HashSet,
    sync::{Mutex, MutexGuard},
};

use sea_orm::DatabaseConnection;

use super::access;
use crate::{
    domain::{clock::SharedClock, expiring::Expiring},
    store::{self, StoreError},
};

#[derive(Debug)]
pub struct KnownPartners {
    seen: Mutex<Expiring<String, ()>>,
    clock: SharedClock,
}

impl KnownPartners {
    /// Holding nothing yet.
    pub fn new(clock: SharedClock) -> KnownPartners {
        KnownPartners {
            seen: Mutex::new(Expiring::new(access::HELD_FOR, access::HELD_AT_MOST)),
            clock,
        }
    }

    /// Which of `ids` exist: those found within `access::HELD_FOR` from
    /// memory, the others from the database (`store::partners::existing`).
    pub async fn existing(
        &self,
        db: &DatabaseConnection,
        ids: &[&str],
    ) -> Result<HashSet<String>, StoreError> {
        let now = self.clock.now_ms();
        let (known, unknown, ticket) = {
            let seen = self.seen();
            let (known, unknown): (Vec<&str>, Vec<&str>) =
                ids.iter().partition(|id| seen.get(**id, now).is_some());
            (known, unknown, seen.ticket())
        };
        let mut existing: HashSet<String> = known.into_iter().map(str::to_string).collect();
        if unknown.is_empty() {
            return Ok(existing);
        }
        let found = store::partners::existing(db, &unknown).await?;
        let mut seen = self.seen();
        for id in &found {
            // Counted from before the read: it never outlives the bound.
            seen.put(ticket, id.clone(), (), now);
        }
        existing.extend(found);
        Ok(existing)
    }

    /// The partner `partner_id` is gone: its events are refused from the
    /// next request on.
    pub fn gone(&self, partner_id: &str) {
        self.seen().forget_where(|id, ()| id == partner_id);
    }

    /// Forgets every partner held (after notifications may have been missed).
    pub fn forget_all(&self) {
        self.seen().forget_all();
    }

    fn seen(&self) -> MutexGuard<'_, Expiring<String, ()>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }
}
