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
//! The statement is a function, `hookd_record_attempts` (created by a
//! migration), so that the server plans it once per session: its rows are
//! found by `id = ANY(ARRAY(…))` as well as by the join, and it is planned
//! with sequential scans off, so a plan made on a young, small table still
//! takes the primary key once the table has grown (the planner cannot see
//! how many rows a JSON parameter holds, guesses 100, and would rather hash
//! the batch and scan every delivery).

use std::collections::HashSet;

use sea_orm::{ConnectionTrait, DbBackend, Value};
use serde_json::json;

use super::{
    StoreError,
    attempt_record::{AttemptRecord, NextState, Trigger},
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
    let recorded = call(txn, batch, now_ms, false).await?;
    Ok(recorded.into_iter().flatten().collect())
}

/// [`write`] as a statement of its own, for a batch of successes that
/// moves no endpoint's health: `None` (nothing written) if an endpoint of
/// the batch is marked failing or warned about after all, whose health the
/// transaction must mend.
pub async fn write_alone(
    db: &impl ConnectionTrait,
    batch: &[AttemptRecord],
    now_ms: i64,
) -> Result<Option<HashSet<String>>, StoreError> {
    let recorded = call(db, batch, now_ms, true).await?;
    Ok(recorded.into_iter().collect())
}

/// The function's answer: a delivery id per attempt written, or (when
/// `guarded`) one NULL instead of any if an endpoint's health needs mending.
async fn call(
    db: &impl ConnectionTrait,
    batch: &[AttemptRecord],
    now_ms: i64,
    guarded: bool,
) -> Result<Vec<Option<String>>, StoreError> {
    let values = vec![
        Value::from(batch_json(batch, now_ms)),
        Value::from(guarded),
        Value::from(now_ms),
    ];
    let rows = db
        .query_all_raw(sql(DbBackend::Postgres, STATEMENT, values))
        .await?;
    let ids = rows
        .iter()
        .map(|r| r.try_get::<Option<String>>("", "delivery_id"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ids)
}

const STATEMENT: &str = "SELECT r AS delivery_id FROM hookd_record_attempts(?::json, ?, ?) AS r";

fn batch_json(batch: &[AttemptRecord], now_ms: i64) -> String {
    let rows: Vec<serde_json::Value> = batch.iter().map(|r| row(r, now_ms)).collect();
    serde_json::Value::Array(rows).to_string()
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

    fn row_of(r: &AttemptRecord) -> serde_json::Value {
        row(r, 1_000)
    }
}
