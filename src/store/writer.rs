//! SQLite's writer connection. SQLite takes one writer at a time, and this
//! process's writers on the delivery path take turns (`Shared::write_turn`);
//! the turn holds one connection of the pool for the process's life, and the
//! hot path's transactions (the group commit of fresh events, the recorder's
//! batch, the fanout's claim, a large ingest batch) run on it instead of on
//! one taken from the pool each time:
//!
//! - its page cache stays warm: SQLite empties a connection's cache whenever
//!   another connection has committed since it last read, so a writer taken
//!   from the pool read again, from the WAL, every page that the writer
//!   before it had just written;
//! - no acquire, and no release (sqlx pings a connection it gets back before
//!   anyone may have it again, and does so in a task of its own);
//! - its transactions begin `IMMEDIATE`: the write lock comes with `BEGIN`,
//!   not with a statement of its own, and no read in them can be overtaken
//!   by another writer.
//!
//! On PostgreSQL, which takes concurrent writers, there is no turn and
//! [`begin`] takes a transaction from the pool.

use std::sync::Arc;

use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, ExecResult,
    QueryResult, RuntimeErr, Statement, TransactionTrait,
    sqlx::{self, Connection as _, Sqlite, SqlitePool, pool::PoolConnection},
};
use sea_query_sqlx::SqlxValues;

/// The writer's connection, taken from the pool when first needed and kept.
pub struct Held {
    pool: SqlitePool,
    conn: Option<PoolConnection<Sqlite>>,
}

impl Held {
    pub fn new(pool: SqlitePool) -> Held {
        Held { pool, conn: None }
    }

    /// An `IMMEDIATE` transaction on the held connection. A connection that
    /// a failed transaction left inside it (its rollback failed too: a full
    /// disk) is closed and another taken, as the pool does with its own
    /// (`full::keep_if_settled`).
    pub async fn begin(&mut self) -> Result<HeldTxn<'_>, DbErr> {
        if let Some(conn) = &mut self.conn
            && conn.is_in_transaction()
        {
            // A dropped transaction's rollback may still be queued: let it run.
            let settled = conn.ping().await.is_ok() && !conn.is_in_transaction();
            if !settled {
                tracing::debug!("closing the writer connection, left inside a transaction");
                if let Some(mut conn) = self.conn.take() {
                    conn.close_on_drop();
                }
            }
        }
        let conn = match self.conn.take() {
            Some(conn) => conn,
            None => self.pool.acquire().await.map_err(acquire_err)?,
        };
        let conn = self.conn.insert(conn);
        let tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(exec_err)?;
        Ok(HeldTxn {
            tx: tokio::sync::Mutex::new(tx),
        })
    }

    /// Gives the connection back to the pool (before the pool closes, which
    /// waits for every connection it lent).
    pub fn release(&mut self) {
        self.conn = None;
    }
}

impl Drop for Held {
    /// sqlx gives a connection back to its pool in a task it spawns, and
    /// panics where no runtime is left to spawn it on (a host that drops
    /// the engine while its runtime shuts down): there the connection is
    /// left to the process's end instead. `release` gives it back.
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take()
            && tokio::runtime::Handle::try_current().is_err()
        {
            std::mem::forget(conn);
        }
    }
}

/// A transaction on the held connection.
pub struct HeldTxn<'c> {
    tx: tokio::sync::Mutex<sqlx::Transaction<'c, Sqlite>>,
}

impl HeldTxn<'_> {
    pub async fn commit(self) -> Result<(), DbErr> {
        self.tx.into_inner().commit().await.map_err(query_err)
    }

    pub async fn rollback(self) -> Result<(), DbErr> {
        self.tx.into_inner().rollback().await.map_err(query_err)
    }
}

/// The statement as sqlx runs it; its values (a batch's JSON among them)
/// are moved, not copied.
fn query(stmt: Statement) -> sqlx::query::Query<'static, Sqlite, SqlxValues> {
    let values = stmt
        .values
        .unwrap_or(sea_orm::sea_query::Values(Vec::new()));
    sqlx::query_with(sqlx::AssertSqlSafe(stmt.sql), SqlxValues(values))
}

fn sqlx_err(e: sqlx::Error) -> RuntimeErr {
    RuntimeErr::SqlxError(Arc::new(e))
}

// The same kinds of error as sea-orm's own connections give, so that
// `is_unique_violation`, `full::is_full` and the rest read them alike.
fn exec_err(e: sqlx::Error) -> DbErr {
    DbErr::Exec(sqlx_err(e))
}

fn query_err(e: sqlx::Error) -> DbErr {
    DbErr::Query(sqlx_err(e))
}

fn acquire_err(e: sqlx::Error) -> DbErr {
    use sea_orm::ConnAcquireErr;
    match e {
        sqlx::Error::PoolTimedOut => DbErr::ConnectionAcquire(ConnAcquireErr::Timeout),
        sqlx::Error::PoolClosed => DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed),
        e => DbErr::Conn(sqlx_err(e)),
    }
}

#[async_trait::async_trait]
impl ConnectionTrait for HeldTxn<'_> {
    fn get_database_backend(&self) -> DbBackend {
        DbBackend::Sqlite
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        let mut tx = self.tx.lock().await;
        let done = query(stmt).execute(&mut **tx).await;
        done.map(Into::into).map_err(exec_err)
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        let mut tx = self.tx.lock().await;
        let done = sqlx::Executor::execute(&mut **tx, sqlx::AssertSqlSafe(sql.to_owned())).await;
        done.map(Into::into).map_err(exec_err)
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        let mut tx = self.tx.lock().await;
        let row = query(stmt).fetch_optional(&mut **tx).await;
        row.map(|row| row.map(Into::into)).map_err(query_err)
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        let mut tx = self.tx.lock().await;
        let rows = query(stmt).fetch_all(&mut **tx).await.map_err(query_err)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }
}

/// A transaction of the delivery path's writers: on the held connection
/// during a turn (SQLite), or from the pool.
pub enum WriteTxn<'c> {
    Held(HeldTxn<'c>),
    Pooled(DatabaseTransaction),
}

/// Begins on `turn`'s connection when there is one, else from `db`'s pool.
pub async fn begin<'c>(
    db: &DatabaseConnection,
    turn: Option<&'c mut Held>,
) -> Result<WriteTxn<'c>, DbErr> {
    Ok(match turn {
        Some(held) => WriteTxn::Held(held.begin().await?),
        None => WriteTxn::Pooled(db.begin().await?),
    })
}

impl WriteTxn<'_> {
    pub async fn commit(self) -> Result<(), DbErr> {
        match self {
            WriteTxn::Held(t) => t.commit().await,
            WriteTxn::Pooled(t) => t.commit().await,
        }
    }

    pub async fn rollback(self) -> Result<(), DbErr> {
        match self {
            WriteTxn::Held(t) => t.rollback().await,
            WriteTxn::Pooled(t) => t.rollback().await,
        }
    }
}

#[async_trait::async_trait]
impl ConnectionTrait for WriteTxn<'_> {
    fn get_database_backend(&self) -> DbBackend {
        match self {
            WriteTxn::Held(t) => t.get_database_backend(),
            WriteTxn::Pooled(t) => t.get_database_backend(),
        }
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        match self {
            WriteTxn::Held(t) => t.execute_raw(stmt).await,
            WriteTxn::Pooled(t) => t.execute_raw(stmt).await,
        }
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        match self {
            WriteTxn::Held(t) => t.execute_unprepared(sql).await,
            WriteTxn::Pooled(t) => t.execute_unprepared(sql).await,
        }
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        match self {
            WriteTxn::Held(t) => t.query_one_raw(stmt).await,
            WriteTxn::Pooled(t) => t.query_one_raw(stmt).await,
        }
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        match self {
            WriteTxn::Held(t) => t.query_all_raw(stmt).await,
            WriteTxn::Pooled(t) => t.query_all_raw(stmt).await,
        }
    }
}
