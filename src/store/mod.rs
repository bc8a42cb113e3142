//! The only place that builds queries. Functions take a connection (or a
//! transaction) and return domain types; partner data is always reached
//! through a function that takes the partner id.

pub mod access_notices;
pub mod admin;
pub mod attempt_record;
pub mod attempt_search;
pub mod audit;
pub mod backlog;
pub mod charts;
pub mod checks;
pub mod claimed;
pub mod claims;
pub mod cluster;
pub mod deliveries;
pub mod dev_keys;
pub mod endpoint_status;
pub mod endpoint_urls;
pub mod endpoint_views;
pub mod endpoints;
pub mod entity;
pub mod fanout;
pub mod fanout_claim;
pub mod fanout_plan;
pub mod full;
pub mod health;
pub mod incident_watch;
pub mod incidents;
pub mod keys;
pub mod listening;
pub mod lost;
pub mod mail;
pub mod notices;
pub mod ordering;
pub mod outbox;
pub mod partner_settings;
pub mod partners;
pub mod paused;
pub mod portal_links;
pub mod publish_at_once;
pub mod pulse;
pub mod receiver_auth;
pub mod record_at_once;
mod record_rows;
pub mod retention;
pub mod routing_cache;
mod row_source;
pub mod samples;
pub mod scoped;
pub mod scoped_feed;
pub mod scoped_ordering;
pub(crate) mod search;
pub mod sessions;
pub mod subscribers;
pub mod thresholds;
pub mod writer;

use std::time::Duration;

use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, Statement,
    Value,
};

use crate::config::{DatabaseConfig, SqliteSynchronous};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot connect to the database at {url}")]
    Connect {
        url: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("migrating the database failed: {0}")]
    Migrate(DbErr),
    #[error(transparent)]
    Db(#[from] DbErr),
    #[error("stored data is invalid: {0}")]
    Corrupt(String),
}

/// The URL with any password replaced, for messages and logs.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// Opens the pool. SQLite gets WAL, a busy timeout and the configured
/// `synchronous` (`FULL` by default: a commit is on the disk before it
/// returns, so an acknowledged event survives a power cut; `NORMAL` syncs at
/// WAL checkpoints and survives a process kill only).
pub async fn connect(cfg: &DatabaseConfig) -> Result<DatabaseConnection, StoreError> {
    connect_pool(cfg, cfg.max_connections).await
}

/// PostgreSQL ends a session left idle inside a transaction this long. hookd
/// never pauses inside a transaction; a process that was paused (SIGSTOP, a
/// frozen VM) or hung there would otherwise hold its row locks, and the feed
/// counter every publisher needs, until it woke.
const IDLE_IN_TRANSACTION: &str = "10s";

/// Prepared statements each SQLite connection keeps. SQLite compiles a
/// statement into memory of this process (tens of KiB for a join or a CTE),
/// so sqlx's default of 100 per connection grew hookd by about 50 MiB under
/// load; the statements a busy instance runs again and again are fewer than
/// this, and a rarer one is prepared again when it comes. A batch's rows go
/// as one parameter (`row_source`), so batches of any size share one
/// statement instead of filling this cache with one per size. PostgreSQL keeps
/// its prepared statements in the server, so its pool keeps the default.
const SQLITE_STATEMENTS: usize = 24;

/// A pooled PostgreSQL connection idle this long is pinged before it is
/// handed out (one that died with its server is closed then, not used). A
/// busy connection is not: sqlx's default pings on every acquire, a round
/// trip to the server before each statement or transaction, a third of the
/// time of a short read. A busy connection that died fails its statement,
/// which every caller already retries, and is dropped on its release.
/// SQLite runs in this process and has no connection to lose.
const PING_IF_IDLE_FOR: Duration = Duration::from_secs(5);

/// Connections of the control pool: the cluster's heartbeat and leases.
const CONTROL_CONNECTIONS: u32 = 2;

/// A small pool of its own for the cluster's heartbeat and lease work, so a
/// main pool saturated by delivery (thousands of endpoints starting at once)
/// never delays a heartbeat past the lease TTL. An in-memory SQLite database
/// exists only in its own pool, so there the main pool is shared.
pub async fn connect_control(
    cfg: &DatabaseConfig,
    main: &DatabaseConnection,
) -> Result<DatabaseConnection, StoreError> {
    if cfg.is_sqlite() && cfg.sqlite_path().is_none() {
        return Ok(main.clone());
    }
    connect_pool(cfg, CONTROL_CONNECTIONS).await
}

async fn connect_pool(cfg: &DatabaseConfig, size: u32) -> Result<DatabaseConnection, StoreError> {
    let mut url = cfg.url.clone();
    if cfg.is_sqlite() && !url.contains("mode=") {
        url.push_str(if url.contains('?') {
            "&mode=rwc"
        } else {
            "?mode=rwc"
        });
    }
    let synchronous = match cfg.sqlite_synchronous {
        SqliteSynchronous::Full => sea_orm::sqlx::sqlite::SqliteSynchronous::Full,
        SqliteSynchronous::Normal => sea_orm::sqlx::sqlite::SqliteSynchronous::Normal,
    };
    let mut opts = ConnectOptions::new(url);
    if cfg.is_sqlite() {
        opts.test_before_acquire(false);
    } else {
        opts.test_before_acquire_if_idle_for(PING_IF_IDLE_FOR);
    }
    opts.max_connections(size)
        .min_connections(1)
        .acquire_timeout(cfg.acquire_timeout)
        .connect_timeout(Duration::from_secs(10))
        .sqlx_logging(false)
        .map_sqlx_sqlite_opts(move |o| {
            o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                .synchronous(synchronous)
                .busy_timeout(Duration::from_secs(30))
                .foreign_keys(true)
                .statement_cache_capacity(SQLITE_STATEMENTS)
        })
        .map_sqlx_sqlite_pool_opts(|o| o.after_release(full::keep_if_settled))
        .map_sqlx_postgres_opts(|o| {
            o.options([("idle_in_transaction_session_timeout", IDLE_IN_TRANSACTION)])
        });
    let connect_error = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Connect {
        url: redact_url(&cfg.url),
        source,
    };
    if !cfg.is_sqlite() {
        // One direct connection first: the pool would retry a refused
        // connection until its acquire timeout and then hide the reason.
        use sea_orm::sqlx::Connection as _;
        let direct = sea_orm::sqlx::PgConnection::connect(&cfg.url);
        match tokio::time::timeout(Duration::from_secs(10), direct).await {
            Err(_) => return Err(connect_error("connecting timed out after 10 s".into())),
            Ok(Err(e)) => return Err(connect_error(Box::new(e))),
            Ok(Ok(conn)) => {
                let _ = conn.close().await;
            }
        }
    }
    Database::connect(opts)
        .await
        .map_err(|e| connect_error(Box::new(e)))
}

pub async fn migrate(db: &DatabaseConnection) -> Result<(), StoreError> {
    use migration::MigratorTrait;
    migration::Migrator::up(db, None)
        .await
        .map_err(StoreError::Migrate)
}

/// A read-only transaction whose reads all see one snapshot. PostgreSQL needs
/// REPEATABLE READ for that (READ COMMITTED takes one per statement); SQLite
/// in WAL mode takes its snapshot at a deferred transaction's first read.
pub async fn snapshot(db: &DatabaseConnection) -> Result<sea_orm::DatabaseTransaction, DbErr> {
    use sea_orm::{AccessMode, IsolationLevel, TransactionTrait};
    if db.get_database_backend() == DbBackend::Postgres {
        db.begin_with_config(
            Some(IsolationLevel::RepeatableRead),
            Some(AccessMode::ReadOnly),
        )
        .await
    } else {
        db.begin().await
    }
}

/// Whether the database could not be reached at all, or the connection
/// was lost under a statement (as opposed to a query that failed): the
/// caller may retry, here or on another instance.
pub fn is_unreachable(e: &DbErr) -> bool {
    matches!(e, DbErr::ConnectionAcquire(_) | DbErr::Conn(_)) || lost::is_connection_lost(e)
}

/// Whether `e` says another writer stored the same id first.
pub fn is_unique_violation(e: &DbErr) -> bool {
    matches!(
        e.sql_err(),
        Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
    )
}

/// A raw statement written with `?` placeholders, numbered for PostgreSQL.
pub(crate) fn sql(backend: DbBackend, text: &str, values: Vec<Value>) -> Statement {
    if backend == DbBackend::Postgres {
        let mut out = String::with_capacity(text.len() + 16);
        let mut n = 0;
        for c in text.chars() {
            if c == '?' {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            } else {
                out.push(c);
            }
        }
        Statement::from_sql_and_values(backend, out, values)
    } else {
        Statement::from_sql_and_values(backend, text, values)
    }
}

/// `?, ?, ?` for an IN list of `n` values.
pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// `FOR UPDATE SKIP LOCKED` where the backend has it (SQLite's single writer
/// makes it unnecessary there).
pub(crate) fn skip_locked(backend: DbBackend) -> &'static str {
    if backend == DbBackend::Postgres {
        " FOR UPDATE SKIP LOCKED"
    } else {
        ""
    }
}

/// Runs `text` once per chunk of up to 500 `ids`, with `{ids}` in it replaced
/// by the chunk's placeholders and the values `before`, the chunk, `after`;
/// maps each row of every chunk with `f`.
pub(crate) async fn query_in_chunks<C: ConnectionTrait, T>(
    db: &C,
    text: &str,
    before: &[Value],
    ids: &[String],
    after: &[Value],
    f: impl Fn(&sea_orm::QueryResult) -> Result<T, DbErr>,
) -> Result<Vec<T>, DbErr> {
    let backend = db.get_database_backend();
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        let values: Vec<Value> = before
            .iter()
            .cloned()
            .chain(chunk.iter().map(|i| Value::from(i.clone())))
            .chain(after.iter().cloned())
            .collect();
        let text = text.replace("{ids}", &placeholders(chunk.len()));
        out.extend(query_all(db, sql(backend, &text, values), &f).await?);
    }
    Ok(out)
}

/// Runs a query and maps each row with `f`.
pub(crate) async fn query_all<C: ConnectionTrait, T>(
    db: &C,
    stmt: Statement,
    f: impl Fn(&sea_orm::QueryResult) -> Result<T, DbErr>,
) -> Result<Vec<T>, DbErr> {
    db.query_all_raw(stmt).await?.iter().map(f).collect()
}
