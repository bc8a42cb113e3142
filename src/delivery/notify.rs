//! PostgreSQL wakes the fanout the moment any process commits an event: a
//! trigger on `outbox_event` NOTIFYs `hookd_outbox` at commit (migration 5),
//! and this task LISTENs on its own connection. It also hears `hookd_work`:
//! another instance fanned out deliveries to endpoints, some perhaps held
//! here; and `hookd_endpoint`: another instance changed an endpoint, whose
//! actor here reloads it. The poll stays the backstop for a notification lost while the
//! connection was down, and for SQLite.

use std::time::Duration;

use actix::prelude::*;
use sea_orm::{DatabaseConnection, DbBackend, sqlx::postgres::PgListener};

use super::messages::{ChangedElsewhere, Wake, WorkFor};
use crate::store::{
    fanout::{CHANGED_CHANNEL, WORK_CHANNEL, parse_work_notice},
    listening::Listening,
};

/// The channel the trigger notifies.
pub const CHANNEL: &str = "hookd_outbox";

/// Who hears what the channels say: the fanout.
pub struct Hearer {
    pub wake: Recipient<Wake>,
    pub work: Recipient<WorkFor>,
    pub changed: Recipient<ChangedElsewhere>,
}

/// Listens until the fanout stops (it owns this future); reconnects after a
/// lost connection. Does nothing on SQLite.
pub async fn listen(db: DatabaseConnection, fanout: Hearer, instance_id: String) {
    if db.get_database_backend() != DbBackend::Postgres {
        return;
    }
    loop {
        match subscribe(&db).await {
            Ok(mut listener) => loop {
                match listener.recv().await {
                    Ok(n) if n.channel() == WORK_CHANNEL => {
                        match parse_work_notice(n.payload()) {
                            // This instance woke its own actors already.
                            Some((from, _)) if from == instance_id => {}
                            Some((_, ids)) => fanout
                                .work
                                .do_send(WorkFor(ids.into_iter().map(str::to_string).collect())),
                            None => tracing::warn!(
                                payload = n.payload(),
                                "an unreadable {WORK_CHANNEL} notification"
                            ),
                        }
                    }
                    Ok(n) if n.channel() == CHANGED_CHANNEL => {
                        match parse_work_notice(n.payload()) {
                            Some((from, _)) if from == instance_id => {}
                            Some((_, ids)) => ids.into_iter().for_each(|id| {
                                fanout.changed.do_send(ChangedElsewhere(id.to_string()))
                            }),
                            None => tracing::warn!(
                                payload = n.payload(),
                                "an unreadable {CHANGED_CHANNEL} notification"
                            ),
                        }
                    }
                    Ok(_) => fanout.wake.do_send(Wake),
                    Err(e) => {
                        tracing::warn!(error = %e, "LISTEN {CHANNEL} lost its connection; the poll covers until it is back");
                        break;
                    }
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot LISTEN {CHANNEL}; the poll covers until it can");
            }
        }
        actix_rt::time::sleep(Duration::from_secs(1)).await;
        // Anything committed while no one listened is found by this wake.
        fanout.wake.do_send(Wake);
    }
}

async fn subscribe(db: &DatabaseConnection) -> Result<Listening, sea_orm::sqlx::Error> {
    let mut listener = PgListener::connect_with(db.get_postgres_connection_pool()).await?;
    listener
        .listen_all([CHANNEL, WORK_CHANNEL, CHANGED_CHANNEL])
        .await?;
    Ok(Listening::new(listener))
}
