//! The durable inbox: every event is stored here before it is acknowledged,
//! and applied from here afterwards by [`apply_pending`].
//!
//! One SQLite file holds three tables:
//!
//! - `inbox`: one row per `webhook-id` (UNIQUE), the exact body received and
//!   what became of it (`pending`, then `applied`, `stale`, `ignored`, `test`
//!   or `failed`);
//! - `subjects`: the newest applied state of each subject (a customer, an API
//!   key, a balance), with its `subject.version`;
//! - `ledger`: money facts, one row per source id, so a fact is booked once
//!   however often it arrives.
//!
//! The schema is the Python example's, so the two are interchangeable.

use std::{sync::Arc, time::Duration};

use sqlx::{
    Connection as _, SqlitePool,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};
use tokio::sync::Notify;

use crate::handlers::{self, Status};

/// How long a write waits for SQLite's lock (and a request for a
/// connection). The webhook answers 503 after this and hookd retries, so keep
/// it well under hookd's own timeout (10 s).
const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// How often the task looks for pending rows without being woken: rows
/// another process stored (a reconciler reading the feed) or a busy database
/// left pending.
const POLL: Duration = Duration::from_secs(1);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS inbox (
    id             INTEGER PRIMARY KEY,         -- arrival order: the queue's order
    webhook_id     TEXT NOT NULL UNIQUE,        -- the event id; a duplicate is a normal outcome
    event_type     TEXT NOT NULL,
    body           TEXT NOT NULL,               -- the exact JSON that was signed
    source         TEXT NOT NULL,               -- 'webhook' or 'feed'
    received_at    INTEGER NOT NULL,            -- Unix ms of the first receipt
    received_count INTEGER NOT NULL DEFAULT 1,  -- how many times it arrived
    status         TEXT NOT NULL DEFAULT 'pending',
    processed_at   INTEGER,
    error          TEXT
);
CREATE INDEX IF NOT EXISTS inbox_pending ON inbox (id) WHERE status = 'pending';
CREATE TABLE IF NOT EXISTS subjects (
    subject_type TEXT NOT NULL,
    subject_id   TEXT NOT NULL,
    version      INTEGER,
    event_id     TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    data         TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (subject_type, subject_id)
);
CREATE TABLE IF NOT EXISTS ledger (
    kind        TEXT NOT NULL,                  -- 'usage' or 'credit'
    source_id   TEXT NOT NULL,                  -- usage_id or adjustment_id, never the event id
    customer_id TEXT NOT NULL,
    currency    TEXT NOT NULL,
    amount      TEXT NOT NULL,                  -- a decimal string, never a float
    event_id    TEXT NOT NULL,
    PRIMARY KEY (kind, source_id)
);
";

/// Whether [`Inbox::store`] saw the event for the first time.
pub enum Stored {
    New,
    Duplicate,
}

#[derive(Clone)]
pub struct Inbox {
    pool: SqlitePool,
}

impl Inbox {
    /// Opens (or creates) the SQLite file and its tables.
    pub async fn open(path: &str) -> Result<Inbox, sqlx::Error> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            // WAL lets readers (your dashboards, a reconciler) run beside the
            // writer; FULL syncs the log at every commit, so a 2xx survives a
            // power cut.
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(BUSY_TIMEOUT)
            .connect_with(options)
            .await?;
        sqlx::raw_sql(SCHEMA).execute(&pool).await?;
        Ok(Inbox { pool })
    }

    /// Stores an event unless its id is already there, where it counts one
    /// more receipt. Committed (and synced) when this returns: only then may
    /// the caller answer 2xx.
    pub async fn store(
        &self,
        webhook_id: &str,
        event_type: &str,
        body: &str,
    ) -> Result<Stored, sqlx::Error> {
        // One statement, so one implicit transaction: the UNIQUE webhook_id
        // decides, not a read before the write.
        let received_count: i64 = sqlx::query_scalar(
            "INSERT INTO inbox (webhook_id, event_type, body, source, received_at)
             VALUES (?, ?, ?, 'webhook', ?)
             ON CONFLICT (webhook_id) DO UPDATE SET received_count = received_count + 1
             RETURNING received_count",
        )
        .bind(webhook_id)
        .bind(event_type)
        .bind(body)
        .bind(crate::now().timestamp_millis())
        .fetch_one(&self.pool)
        .await?;
        Ok(if received_count == 1 {
            Stored::New
        } else {
            Stored::Duplicate
        })
    }

    /// Applies the oldest pending event; `false` when none was pending.
    ///
    /// The business effect and the row's new status commit together: after a
    /// crash the event is still pending and is applied again, never half
    /// applied. `BEGIN IMMEDIATE` takes the write lock up front, so two
    /// appliers (this task and a reconciler) never both take one row.
    pub async fn apply_next(&self) -> Result<bool, sqlx::Error> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let pending: Option<(i64, String, String, String)> = sqlx::query_as(
            "SELECT id, webhook_id, event_type, body FROM inbox
             WHERE status = 'pending' ORDER BY id LIMIT 1",
        )
        .fetch_optional(&mut *tx)
        .await?;
        let Some((id, webhook_id, event_type, body)) = pending else {
            return Ok(false);
        };
        // A savepoint around the effect: a handler that fails undoes its own
        // writes, and its event ends `failed` instead of blocking the ones
        // behind it.
        let mut effect = tx.begin().await?;
        let (status, error) = match handlers::apply(&mut effect, &body).await {
            Ok(status) => {
                effect.commit().await?;
                (status, None)
            }
            Err(e) => {
                effect.rollback().await?;
                tracing::error!(webhook_id, event_type, "failed: {e:#}");
                (Status::Failed, Some(format!("{e:#}")))
            }
        };
        sqlx::query("UPDATE inbox SET status = ?, processed_at = ?, error = ? WHERE id = ?")
            .bind(status.as_str())
            .bind(crate::now().timestamp_millis())
            .bind(error)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        tracing::info!(webhook_id, event_type, "{}", status.as_str());
        Ok(true)
    }
}

/// Applies pending events in arrival order, after they were acknowledged:
/// at once when woken, and every [`POLL`] in any case. Runs for the life of
/// the process.
pub async fn apply_pending(inbox: Inbox, wake: Arc<Notify>) {
    loop {
        loop {
            match inbox.apply_next().await {
                Ok(true) => continue,
                Ok(false) => break,
                // The database is busy or gone: the event stays pending and
                // is tried again at the next round.
                Err(e) => {
                    tracing::error!("applying events: {e}");
                    break;
                }
            }
        }
        let _ = tokio::time::timeout(POLL, wake.notified()).await;
    }
}
