//! What the database's sessions are doing, for a failing test's report: a
//! session idle in a transaction that holds a lock others wait for is how a
//! paused instance shows itself.

use super::Fleet;

impl Fleet {
    /// What each database session is doing and waiting for, for a report.
    pub async fn sessions(&self) -> String {
        let rows = self
            .query(
                "SELECT pid, state, COALESCE(wait_event_type, '') || ':' || COALESCE(wait_event, '') AS waits, \
                 COALESCE((EXTRACT(EPOCH FROM clock_timestamp() - xact_start) * 1000)::BIGINT, -1) AS xact_ms, \
                 LEFT(query, 120) AS query FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid()",
            )
            .await;
        rows.iter()
            .map(|r| {
                format!(
                    "  {:?} {:?} waits {:?} in a transaction for {:?} ms: {:?}",
                    r.try_get::<i32>("", "pid").ok(),
                    r.try_get::<Option<String>>("", "state").ok().flatten(),
                    r.try_get::<String>("", "waits").ok(),
                    r.try_get::<i64>("", "xact_ms").ok(),
                    r.try_get::<Option<String>>("", "query").ok().flatten(),
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
