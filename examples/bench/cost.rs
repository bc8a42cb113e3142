//! What a run cost: CPU seconds of hookd and of PostgreSQL, and on
//! PostgreSQL the database's own counts (transactions, rows written,
//! statements), each per 1,000 deliveries.
//!
//! hookd runs in this process beside the receiver and the producer, so its
//! CPU is the process's less theirs: the receiver's threads are those that
//! appeared while it started (`Threads::since`), the producer's is the
//! thread named `bench-producer`. PostgreSQL's CPU is the sum over the
//! postmaster's children (its connections' backends, the WAL writer…).
//! `/proc` counts in ticks of 1/100 s (USER_HZ on Linux).

use std::collections::HashSet;
use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

const TICK: Duration = Duration::from_millis(10);

/// The thread ids of this process.
pub fn thread_ids() -> HashSet<u32> {
    std::fs::read_dir("/proc/self/task")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// user + system time of a `/proc/…/stat` line (fields 14 and 15, after the
/// parenthesised name, which may hold spaces).
fn stat_cpu(stat: &str) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let user: u32 = fields.get(11)?.parse().ok()?;
    let system: u32 = fields.get(12)?.parse().ok()?;
    Some(TICK * (user + system))
}

fn cpu_of(path: &str) -> Duration {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| stat_cpu(&s))
        .unwrap_or_default()
}

fn comm_of(path: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The threads that are not hookd's: the receiver's and the producer's.
pub struct Others {
    pub receiver: HashSet<u32>,
}

impl Others {
    /// CPU of this process less the receiver's and the producer's threads.
    pub fn hookd_cpu(&self) -> Duration {
        let theirs: Duration = thread_ids()
            .into_iter()
            .filter(|tid| {
                self.receiver.contains(tid)
                    || comm_of(&format!("/proc/self/task/{tid}/comm")) == "bench-producer"
            })
            .map(|tid| cpu_of(&format!("/proc/self/task/{tid}/stat")))
            .sum();
        cpu_of("/proc/self/stat").saturating_sub(theirs)
    }
}

/// CPU of process `pid` (all its threads) so far.
pub fn process_cpu(pid: &str) -> Duration {
    cpu_of(&format!("/proc/{pid}/stat"))
}

/// CPU of every process whose parent is the postmaster of the cluster in
/// `HOOKD_TEST_PG_DIR` (or the tests' default folder), and its own.
pub fn postgres_cpu() -> Duration {
    let dir = match std::env::var_os("HOOKD_TEST_PG_DIR") {
        Some(dir) if !dir.is_empty() => std::path::PathBuf::from(dir),
        _ => std::env::temp_dir().join("hookd-test-pg"),
    };
    let Some(postmaster) = std::fs::read_to_string(dir.join("data/postmaster.pid"))
        .ok()
        .and_then(|s| s.lines().next().map(str::to_string))
    else {
        return Duration::ZERO;
    };
    let children: Duration = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter(|stat| parent_of(stat) == Some(postmaster.as_str()))
        .filter_map(|stat| stat_cpu(&stat))
        .sum();
    children + cpu_of(&format!("/proc/{postmaster}/stat"))
}

fn parent_of(stat: &str) -> Option<&str> {
    stat[stat.rfind(')')? + 2..].split(' ').nth(1)
}

/// The database's counts for this database, as PostgreSQL keeps them.
#[derive(Debug, Default, Clone, Copy)]
pub struct DbCounts {
    pub commits: i64,
    pub rows_written: i64,
    /// `None` without `pg_stat_statements` loaded.
    pub statements: Option<i64>,
}

impl DbCounts {
    pub async fn read(db: &DatabaseConnection) -> DbCounts {
        if db.get_database_backend() != sea_orm::DbBackend::Postgres {
            return DbCounts::default();
        }
        // Counters reach the shared view at a transaction's end, at most
        // once a second per backend: read the figures of a settled run.
        let _ = db
            .execute_unprepared("SELECT pg_stat_force_next_flush()")
            .await;
        let row = db
            .query_one_raw(Statement::from_string(
                db.get_database_backend(),
                "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted AS written \
                 FROM pg_stat_database WHERE datname = current_database()",
            ))
            .await
            .ok()
            .flatten();
        let get = |c: &str| row.as_ref().and_then(|r| r.try_get::<i64>("", c).ok());
        let statements = db
            .query_one_raw(Statement::from_string(
                db.get_database_backend(),
                "SELECT COALESCE(SUM(calls), 0)::bigint AS n FROM pg_stat_statements \
                 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
            ))
            .await
            .ok()
            .flatten()
            .and_then(|r| r.try_get::<i64>("", "n").ok());
        DbCounts {
            commits: get("xact_commit").unwrap_or(0),
            rows_written: get("written").unwrap_or(0),
            statements,
        }
    }
}

/// A run's cost, from two readings.
pub struct Cost {
    pub hookd: Duration,
    pub postgres: Duration,
    pub db: Option<(DbCounts, DbCounts)>,
}

impl Cost {
    /// "CPU s/1000 deliveries hookd … PostgreSQL …; per delivery: … commits,
    /// … row writes, … statements".
    pub fn describe(&self, deliveries: usize) -> String {
        let per_k = |d: Duration| d.as_secs_f64() * 1000.0 / deliveries.max(1) as f64;
        let mut out = format!("CPU s/1000 deliveries: hookd {:.3}", per_k(self.hookd));
        if let Some((before, after)) = self.db {
            let per = |a: i64, b: i64| (a - b) as f64 / deliveries.max(1) as f64;
            out.push_str(&format!(
                " + PostgreSQL {:.3} = {:.3}; per delivery: {:.2} commits, {:.2} row writes",
                per_k(self.postgres),
                per_k(self.hookd + self.postgres),
                per(after.commits, before.commits),
                per(after.rows_written, before.rows_written),
            ));
            if let (Some(a), Some(b)) = (after.statements, before.statements) {
                out.push_str(&format!(", {:.2} statements", per(a, b)));
            }
        }
        out
    }
}

/// The heaviest statements of this database by total time, for a profile
/// (standard error); nothing without `pg_stat_statements`.
pub async fn top_statements(db: &DatabaseConnection, deliveries: usize) -> Vec<String> {
    let Ok(rows) = db
        .query_all_raw(Statement::from_string(
            sea_orm::DbBackend::Postgres,
            "SELECT SUM(calls)::bigint AS calls, SUM(rows)::bigint AS rows, SUM(total_exec_time)::float8 AS ms, \
             COUNT(*)::bigint AS shapes, q FROM (SELECT calls, rows, total_exec_time, \
             left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS q FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())) s \
             GROUP BY q ORDER BY ms DESC LIMIT 25",
        ))
        .await
    else {
        return Vec::new();
    };
    let per = |n: i64| n as f64 / deliveries.max(1) as f64;
    rows.iter()
        .filter_map(|r| {
            let calls: i64 = r.try_get("", "calls").ok()?;
            let n: i64 = r.try_get("", "rows").ok()?;
            let ms: f64 = r.try_get("", "ms").ok()?;
            let shapes: i64 = r.try_get("", "shapes").ok()?;
            let q: String = r.try_get("", "q").ok()?;
            Some(format!(
                "{ms:8.0} ms {:6.3} calls/dlv {:6.3} rows/dlv {shapes:4} shapes  {q}",
                per(calls),
                per(n)
            ))
        })
        .collect()
}
