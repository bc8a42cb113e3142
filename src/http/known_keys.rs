//! What this process knows of the API keys: the hashes of the unrevoked
//! keys, and the principals of keys presented lately.
//!
//! The list of hashes decides which callers may still reach the database when
//! their client address has spent its budget for failures (see `auth`).
//! Strangers sharing an address with a producer (every process on a
//! sidecar's host is 127.0.0.1) must not lock it out. A stale entry (a key
//! revoked by another instance a moment ago) reaches the look-up, gets its
//! 401 and spends the budget; a missing one (a key made by another instance)
//! waits for the next refresh. Keys made or revoked through this process, and
//! revocations other instances announce, refresh it at once.
//!
//! The principals answer a valid key's requests without a database look-up,
//! for at most `access::HELD_FOR` after the look-up that found it: a key
//! revoked through this process is forgotten at once, one revoked by another
//! instance on PostgreSQL as soon as its announcement arrives
//! (`store::access_notices`), and one revoked any other way (plain SQL,
//! `hookd key revoke` on SQLite) when its entry expires. An unknown key is
//! never held: a key made a moment ago elsewhere works at once.

use std::{
    collections::HashSet,
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use sea_orm::DatabaseConnection;

use super::access;
use crate::{
    domain::{clock::SharedClock, expiring::Expiring},
    store::{
        StoreError,
        keys::{self, Principal},
    },
};

/// How often the list is read again, so that keys made or revoked by other
/// instances (or by `hookd key`) arrive.
pub const REFRESH_EVERY: Duration = Duration::from_secs(10);

/// No key is longer: a longer token is not hashed at all.
const LONGEST_KEY: usize = 128;

#[derive(Debug, Default)]
struct Loaded {
    /// The refresh that read this list: an older one never replaces it.
    refresh: u64,
    hashes: HashSet<String>,
}

#[derive(Debug)]
pub struct KnownKeys {
    db: DatabaseConnection,
    /// Refreshes started so far.
    started: AtomicU64,
    loaded: RwLock<Loaded>,
    /// The principals of valid keys presented lately, by the key's hash.
    recent: Mutex<Expiring<String, Principal>>,
    clock: SharedClock,
}

impl KnownKeys {
    /// The list as the database has it now; no principal held yet.
    pub async fn load(
        db: DatabaseConnection,
        clock: SharedClock,
    ) -> Result<Arc<KnownKeys>, StoreError> {
        let known = Arc::new(KnownKeys {
            db,
            started: AtomicU64::new(0),
            loaded: RwLock::default(),
            recent: Mutex::new(Expiring::new(access::HELD_FOR, access::HELD_AT_MOST)),
            clock,
        });
        known.refresh().await?;
        Ok(known)
    }

    /// The principal of `token` if it is a valid key: from memory if it was
    /// found valid within `access::HELD_FOR`, otherwise from the database.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Principal>, StoreError> {
        if token.len() > LONGEST_KEY {
            return Ok(None);
        }
        let hash = keys::hash(token);
        let now = self.clock.now_ms();
        let ticket = {
            let recent = self.recent();
            if let Some(principal) = recent.get(&hash, now) {
                return Ok(Some(principal.clone()));
            }
            recent.ticket()
        };
        let found = keys::authenticate(&self.db, token).await?;
        if let Some(principal) = &found {
            // Counted from before the read: it never outlives the bound.
            self.recent().put(ticket, hash, principal.clone(), now);
        }
        Ok(found)
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, Expiring<String, Principal>> {
        self.recent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key `key_id` was revoked (announced by another instance): it is
    /// refused from the next request on, and the list is read again.
    pub async fn revoked(&self, key_id: &str) {
        self.recent().forget_where(|_, p| p.key_id == key_id);
        self.reread().await;
    }

    /// Forgets every principal held: the next request of each key is looked
    /// up again (after notifications may have been missed).
    pub fn forget_principals(&self) {
        self.recent().forget_all();
    }

    /// Whether `token` is (or was at the last refresh) an unrevoked key.
    pub fn holds(&self, token: &str) -> bool {
        if token.len() > LONGEST_KEY {
            return false;
        }
        let hash = keys::hash(token);
        let loaded = self.loaded.read().unwrap_or_else(|e| e.into_inner());
        loaded.hashes.contains(&hash)
    }

    /// Reads the list again. Of two refreshes that overlap, the one started
    /// later wins, so a key made before a refresh started is in the list it
    /// leaves.
    pub async fn refresh(&self) -> Result<(), StoreError> {
        let refresh = self.started.fetch_add(1, Ordering::AcqRel) + 1;
        let hashes: HashSet<String> = keys::active_hashes(&self.db).await?.into_iter().collect();
        let mut loaded = self.loaded.write().unwrap_or_else(|e| e.into_inner());
        if refresh > loaded.refresh {
            *loaded = Loaded { refresh, hashes };
        }
        Ok(())
    }

    /// After a key was made or revoked here: forgets the principals held (a
    /// revoked key is refused from the next request on) and refreshes the
    /// list now.
    pub async fn changed(&self) {
        self.forget_principals();
        self.reread().await;
    }

    /// Refreshes now. A failure is logged, not returned: the change itself
    /// is stored, and the next periodic refresh brings the list up to date.
    async fn reread(&self) {
        if let Err(e) = self.refresh().await {
            tracing::warn!(error = %e, "the list of valid keys could not be read again after a key changed");
        }
    }

    /// Refreshes every `REFRESH_EVERY` until the task is aborted.
    pub fn keep_fresh(self: &Arc<KnownKeys>) -> actix_rt::task::JoinHandle<()> {
        let known = self.clone();
        actix_rt::spawn(async move {
            let mut every = actix_rt::time::interval(REFRESH_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // The first tick is at once, and the list was just loaded.
            every.tick().await;
            loop {
                every.tick().await;
                if let Err(e) = known.refresh().await {
                    tracing::warn!(error = %e, "the list of valid keys could not be read again");
                }
            }
        })
    }
}
