//! A database whose disk is full, and a pool that recovers from it.
//!
//! SQLite answers a write it cannot store with `SQLITE_FULL` (13), and may
//! roll the whole transaction back on its own. sqlx does not see that: its
//! count of open transactions stays up, the next `BEGIN` on the connection
//! becomes a `SAVEPOINT`, and a failure in that one rolls back to the
//! savepoint without ending the transaction, which then holds the write
//! lock for good: every other connection waits `database is locked` until a
//! restart. So a connection the pool gets back while sqlx still counts a
//! transaction on it (after any queued rollback has run) is closed, not
//! reused. PostgreSQL reports its own full disk as SQLSTATE 53100.

use sea_orm::{DbErr, RuntimeErr, sqlx};

/// SQLite's primary result code for "database or disk is full".
const SQLITE_FULL: &str = "13";
/// PostgreSQL's `disk_full`.
const PG_DISK_FULL: &str = "53100";

/// Whether `e` says the database's storage is full.
pub fn is_storage_full(e: &DbErr) -> bool {
    let runtime = match e {
        DbErr::Query(r) | DbErr::Exec(r) | DbErr::Conn(r) => r,
        _ => return false,
    };
    let RuntimeErr::SqlxError(sqlx_error) = runtime else {
        return false;
    };
    let sqlx::Error::Database(db) = sqlx_error.as_ref() else {
        return false;
    };
    db.code()
        .is_some_and(|code| code == SQLITE_FULL || code == PG_DISK_FULL)
}

/// The pool's check of a connection it gets back: kept unless sqlx still
/// counts a transaction on it once the worker has run what was queued.
pub fn keep_if_settled(
    conn: &mut sqlx::SqliteConnection,
    _: sqlx::pool::PoolConnectionMetadata,
) -> futures_util::future::BoxFuture<'_, Result<bool, sqlx::Error>> {
    use sqlx::Connection as _;
    Box::pin(async move {
        if !conn.is_in_transaction() {
            return Ok(true);
        }
        // A dropped transaction's rollback may still be queued: let it run.
        conn.ping().await?;
        if conn.is_in_transaction() {
            // Routine after a failed write; its cause is logged where it met it.
            tracing::debug!("closing a database connection left inside a transaction");
            return Ok(false);
        }
        Ok(true)
    })
}
