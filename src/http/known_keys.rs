//! The hashes of the unrevoked API keys, held in memory: which callers may
//! still reach the database when their client address has spent its budget
//! for failures (see `auth`). Strangers sharing an address with a producer
//! (every process on a sidecar's host is 127.0.0.1) must not lock it out.
//!
//! The list only decides who may be looked up; the database still decides
//! whether a key is valid. A stale entry (a key revoked by another instance
//! a moment ago) reaches the database, gets its 401 and spends the budget; a
//! missing one (a key made by another instance) waits for the next refresh.
//! Keys made or revoked through this process refresh it at once.

use std::{
    collections::HashSet,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use sea_orm::DatabaseConnection;

use crate::store::{StoreError, keys};

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
}

impl KnownKeys {
    /// The list as the database has it now.
    pub async fn load(db: DatabaseConnection) -> Result<Arc<KnownKeys>, StoreError> {
        let known = Arc::new(KnownKeys {
            db,
            started: AtomicU64::new(0),
            loaded: RwLock::default(),
        });
        known.refresh().await?;
        Ok(known)
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

    /// After a key was made or revoked here: refreshes now. A failure is
    /// logged, not returned: the change itself is stored, and the next
    /// periodic refresh brings the list up to date.
    pub async fn changed(&self) {
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
