//! How this process hears at once of keys and partners other instances
//! change: on PostgreSQL, a task LISTENs on `hookd_access` (see
//! `store::access_notices`) and forgets what each notification names from
//! `known_keys` and `known_partners`. Does nothing on SQLite, where the
//! expiry (`access::HELD_FOR`) is the bound.

use std::{sync::Arc, time::Duration};

use sea_orm::{DatabaseConnection, DbBackend, sqlx::postgres::PgListener};

use super::{known_keys::KnownKeys, known_partners::KnownPartners};
use crate::store::{
    access_notices::{ACCESS_CHANNEL, AccessChange},
    listening::Listening,
};

/// Subscribes on the database at `url` (so that hookd listens before it
/// answers its first request), then listens in a task of its own until that
/// is aborted or `db`'s pool closes. After a lost connection it subscribes again and forgets
/// everything held, since notifications were missed meanwhile.
pub async fn listen(
    db: DatabaseConnection,
    url: String,
    keys: Arc<KnownKeys>,
    partners: Arc<KnownPartners>,
) -> actix_rt::task::JoinHandle<()> {
    let postgres = db.get_database_backend() == DbBackend::Postgres;
    let mut subscribed = if postgres {
        subscribe(&url).await
    } else {
        None
    };
    actix_rt::spawn(async move {
        if !postgres {
            return;
        }
        loop {
            if let Some(listener) = subscribed.take() {
                hear(listener, &keys, &partners).await;
            }
            if db.get_postgres_connection_pool().is_closed() {
                return;
            }
            actix_rt::time::sleep(Duration::from_secs(1)).await;
            subscribed = subscribe(&url).await;
            if subscribed.is_some() {
                forget_everything(&keys, &partners);
            }
        }
    })
}

/// Forgets what each notification names, until the connection fails.
async fn hear(mut listener: Listening, keys: &KnownKeys, partners: &KnownPartners) {
    loop {
        match listener.try_recv().await {
            Ok(Some(n)) => match AccessChange::parse(n.payload()) {
                Some(AccessChange::KeyRevoked(id)) => keys.revoked(&id).await,
                Some(AccessChange::PartnerGone(id)) => partners.gone(&id),
                None => tracing::warn!(
                    payload = n.payload(),
                    "an unreadable {ACCESS_CHANNEL} notification"
                ),
            },
            // The connection was lost and made again.
            Ok(None) => forget_everything(keys, partners),
            Err(e) => {
                tracing::warn!(error = %e, "LISTEN {ACCESS_CHANNEL} lost its connection; keys and partners held expire meanwhile");
                return;
            }
        }
    }
}

/// What was held while no notification could arrive may be stale.
fn forget_everything(keys: &KnownKeys, partners: &KnownPartners) {
    keys.forget_principals();
    partners.forget_all();
}

/// A connection that listens on `hookd_access`; none if it cannot be made.
/// It is a connection of its own, not one of the pool's: the pool's serve
/// requests and deliveries.
async fn subscribe(url: &str) -> Option<Listening> {
    let subscribed = async {
        let mut listener = PgListener::connect(url).await?;
        listener.listen(ACCESS_CHANNEL).await?;
        Ok::<_, sea_orm::sqlx::Error>(Listening::new(listener))
    };
    subscribed
        .await
        .inspect_err(|e| {
            tracing::warn!(error = %e, "cannot LISTEN {ACCESS_CHANNEL}; keys and partners held expire meanwhile");
        })
        .ok()
}
