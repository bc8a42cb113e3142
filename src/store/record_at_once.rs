//! The common group commit of attempts on PostgreSQL in one statement of
//! one shape: the batch goes as one JSON parameter, the deliveries whose
//! claim still stands move on (the claim is checked by the UPDATE itself,
//! which takes the row lock), and an attempt row is written for exactly
//! those. Whatever the batch's size, the server parses and plans the same
//! statement, and no row is locked, read or sent back twice.
//!
//! It covers a first write of scheduled attempts of distinct, unordered
//! deliveries, the recorder's every-day batch. Replays, a delivery twice in
//! a batch, a write repeated after a lost answer, and ordered deliveries
//! (whose rows every writer locks in the order of their ids, see
//! `ordering::busy`; a join locks in its own order) take the general path
//! (`deliveries::record`).
//!
//! The rows are found by `id = ANY(ARRAY(…))` as well as by the join: the
//! planner cannot see how many rows a JSON parameter holds (it guesses
//! 100) and would rather hash the batch and scan every delivery. With the
//! array, a plan made for the table's true size takes the primary key; the
//! every-day batch is planned each time for that reason ([`write_alone`]).

use std::collections::HashSet;

use sea_orm::{
    ConnAcquireErr, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, RuntimeErr, Value,
    sqlx::{self, Row as _},
};
use serde_json::json;

use super::{
    StoreError,
    attempt_record::{AttemptRecord, NextState, Trigger},
    ordering::HOLD_IF_ORDERED,
    sql,
};

/// Whether `batch` can be written by [`write`].
pub fn fits(backend: DbBackend, batch: &[AttemptRecord], again: bool) -> bool {
    if backend != DbBackend::Postgres || again {
        return false;
    }
    let mut seen = HashSet::with_capacity(batch.len());
    batch.iter().all(|r| {
        r.trigger == Trigger::Scheduled
            && r.replay_id.is_none()
            && !r.ordered
            && r.next != NextState::Unchanged
            && seen.insert(r.delivery_id.as_str())
    })
}

/// One record as the statement reads it.
fn row(r: &AttemptRecord, now_ms: i64) -> serde_json::Value {
    let (state, next_at) = r.next.written(now_ms);
    json!({
        "id": r.id,
        "delivery_id": r.delivery_id,
        "endpoint_id": r.endpoint_id,
        "claim_seq": r.claim_seq,
        "attempt_no": r.attempt_no,
        "trigger": r.trigger.as_str(),
        "started_at": r.started_at,
        "latency_ms": r.latency_ms,
        "status_code": r.status_code,
        "error_category": r.error.as_ref().map(|e| e.0.as_str()),
        "error_detail": r.error.as_ref().map(|e| e.1.as_str()),
        "response_excerpt": r.excerpt,
        "remote_addr": r.remote_addr,
        "url": r.url,
        "next_attempt_at": r.next.retry_at(),
        "location": r.location,
        "state": state,
        "next_at": next_at,
    })
}

/// Writes `batch` (for which [`fits`] holds); returns the deliveries whose
/// attempt was recorded. The others' claims were superseded (or their
/// deliveries deleted): their attempts are left out.
pub async fn write(
    txn: &impl ConnectionTrait,
    batch: &[AttemptRecord],
    now_ms: i64,
) -> Result<HashSet<String>, StoreError> {
    let values = vec![Value::from(batch_json(batch, now_ms)), Value::from(now_ms)];
    let recorded = txn
        .query_all_raw(sql(DbBackend::Postgres, &statement(false), values))
        .await?
        .iter()
        .map(|r| r.try_get::<String>("", "delivery_id"))
        .collect::<Result<HashSet<String>, _>>()?;
    Ok(recorded)
}

/// [`write`] as a statement of its own, for a batch of successes that
/// moves no endpoint's health: `None` (nothing written) if an endpoint of
/// the batch is marked failing or warned about after all, whose health the
/// transaction must mend. Planned for its parameters each time it runs
/// (not prepared): a prepared statement's generic plan is made once per
/// connection; made while the delivery table was small (a fresh install,
/// the first seconds of a burst), it scans the table, and keeps scanning
/// it as it grows until the table is next analysed.
pub async fn write_alone(
    db: &DatabaseConnection,
    batch: &[AttemptRecord],
    now_ms: i64,
) -> Result<Option<HashSet<String>>, StoreError> {
    let text = sql(DbBackend::Postgres, &statement(true), vec![]).sql;
    let mut conn = db
        .get_postgres_connection_pool()
        .acquire()
        .await
        .map_err(acquire_error)?;
    let query_error = |e: sqlx::Error| DbErr::Query(RuntimeErr::SqlxError(e.into()));
    // Built from constants only: the batch travels as a parameter.
    let rows = sqlx::query(sqlx::AssertSqlSafe(text))
        .persistent(false)
        .bind(batch_json(batch, now_ms))
        .bind(now_ms)
        .fetch_all(&mut *conn)
        .await
        .map_err(query_error)?;
    let ids = rows
        .iter()
        .map(|r| r.try_get::<Option<String>, _>("delivery_id"))
        .collect::<Result<Option<HashSet<String>>, _>>()
        .map_err(query_error)?;
    Ok(ids)
}

/// A pool's refusal as sea-orm reports it, so that an unreachable database
/// reads the same whichever way it was asked (`store::is_unreachable`).
fn acquire_error(e: sqlx::Error) -> DbErr {
    match e {
        sqlx::Error::PoolTimedOut => DbErr::ConnectionAcquire(ConnAcquireErr::Timeout),
        sqlx::Error::PoolClosed => DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed),
        e => DbErr::Conn(RuntimeErr::SqlxError(e.into())),
    }
}

fn batch_json(batch: &[AttemptRecord], now_ms: i64) -> String {
    let rows: Vec<serde_json::Value> = batch.iter().map(|r| row(r, now_ms)).collect();
    serde_json::Value::Array(rows).to_string()
}

/// The statement: the batch as `?` 1, the time as `?` 2. `guarded`: it
/// writes nothing if an endpoint of the batch is marked failing (or
/// warned about), and answers one row with no delivery id instead.
fn statement(guarded: bool) -> String {
    let (guard, unless_guarded, answer) = if guarded {
        (
            "h AS (SELECT 1 FROM endpoint WHERE id IN (SELECT endpoint_id FROM v) \
             AND (failing_since IS NOT NULL OR warned_at IS NOT NULL) LIMIT 1), ",
            " AND NOT EXISTS (SELECT 1 FROM h)",
            " SELECT delivery_id FROM i UNION ALL SELECT NULL FROM h",
        )
    } else {
        ("", "", " SELECT delivery_id FROM i")
    };
    format!(
        "WITH v AS (SELECT * FROM json_to_recordset(?::json) AS v(id text, delivery_id text, \
         endpoint_id text, claim_seq bigint, attempt_no int, trigger text, started_at bigint, \
         latency_ms int, status_code int, error_category text, error_detail text, \
         response_excerpt text, remote_addr text, url text, next_attempt_at bigint, \
         location text, state text, next_at bigint)), {guard}\
         u AS (UPDATE delivery SET \
         state = CASE WHEN v.state = 'failed' AND EXISTS (SELECT 1 FROM endpoint e \
         WHERE e.id = delivery.endpoint_id AND e.status <> 'active') THEN 'paused' ELSE v.state END, \
         next_attempt_at = v.next_at, attempt_count = delivery.attempt_count + 1, \
         scheduled_attempts = delivery.scheduled_attempts + 1, last_status = v.status_code, \
         last_latency_ms = v.latency_ms, last_error_category = v.error_category, updated_at = ?, \
         holding = CASE WHEN v.state = 'dead' THEN {HOLD_IF_ORDERED} ELSE 0 END \
         FROM v WHERE delivery.id = ANY(ARRAY(SELECT delivery_id FROM v)) \
         AND delivery.id = v.delivery_id AND delivery.claim_seq = v.claim_seq{unless_guarded} \
         RETURNING delivery.id), \
         i AS (INSERT INTO attempt (id, delivery_id, attempt_no, trigger, started_at, latency_ms, \
         status_code, error_category, error_detail, response_excerpt, remote_addr, url, \
         next_attempt_at, location) \
         SELECT v.id, v.delivery_id, v.attempt_no, v.trigger, v.started_at, v.latency_ms, \
         v.status_code, v.error_category, v.error_detail, v.response_excerpt, v.remote_addr, \
         v.url, v.next_attempt_at, v.location FROM v JOIN u ON u.id = v.delivery_id \
         RETURNING delivery_id){answer}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheduled(delivery: &str) -> AttemptRecord {
        AttemptRecord {
            id: format!("att_{delivery}"),
            delivery_id: delivery.into(),
            endpoint_id: "ep_1".into(),
            attempt_no: 1,
            trigger: Trigger::Scheduled,
            started_at: 1,
            latency_ms: 2,
            status_code: Some(200),
            error: None,
            excerpt: None,
            remote_addr: None,
            url: None,
            location: None,
            next: NextState::Delivered,
            replay_id: None,
            claim_seq: 1,
            ordered: false,
        }
    }

    #[test]
    fn a_first_write_of_scheduled_attempts_of_distinct_deliveries_goes_in_one_statement_on_postgres()
     {
        let batch = [scheduled("d1"), scheduled("d2")];
        assert!(fits(DbBackend::Postgres, &batch, false));
        assert!(
            !fits(DbBackend::Sqlite, &batch, false),
            "SQLite has no DML in a CTE"
        );
        assert!(
            !fits(DbBackend::Postgres, &batch, true),
            "a repeated write looks first"
        );
    }

    #[test]
    fn replays_repeats_of_a_delivery_and_ordered_deliveries_take_the_general_path() {
        let replay = AttemptRecord {
            replay_id: Some("rpl_1".into()),
            trigger: Trigger::Manual,
            ..scheduled("d2")
        };
        let ordered = AttemptRecord {
            ordered: true,
            ..scheduled("d3")
        };
        for odd in [replay, scheduled("d1"), ordered] {
            let batch = [scheduled("d1"), odd];
            assert!(!fits(DbBackend::Postgres, &batch, false), "{batch:?}");
        }
    }

    #[test]
    fn each_record_carries_its_claim_and_the_delivery_s_next_state() {
        let retry = AttemptRecord {
            next: NextState::RetryAt(5_000),
            status_code: Some(503),
            ..scheduled("d1")
        };
        let row = row(&retry, 1_000);
        assert_eq!(row["claim_seq"], 1);
        assert_eq!(row["state"], "failed");
        assert_eq!(row["next_at"], 5_000);
        assert_eq!(row["next_attempt_at"], 5_000);
        let delivered = row_of(&scheduled("d2"));
        assert_eq!(delivered["state"], "delivered");
        assert_eq!(delivered["next_at"], 1_000);
        assert!(delivered["next_attempt_at"].is_null());
    }

    #[test]
    fn a_pool_that_cannot_give_a_connection_reads_as_an_unreachable_database() {
        for e in [sqlx::Error::PoolTimedOut, sqlx::Error::PoolClosed] {
            assert!(super::super::is_unreachable(&acquire_error(e)));
        }
    }

    fn row_of(r: &AttemptRecord) -> serde_json::Value {
        row(r, 1_000)
    }
}
