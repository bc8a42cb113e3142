//! The statements one chunk of a recorded batch runs (at most one record
//! per delivery in a chunk): the deliveries move along their schedule, then
//! the attempts of those that moved are stored, then the replays they ran
//! are done.

use std::collections::HashSet;

use sea_orm::{ConnectionTrait, Value};

use super::{
    StoreError,
    attempt_record::{AttemptRecord, Trigger},
    ordering::HOLD_IF_ORDERED,
    placeholders,
    row_source::RowSource,
    sql,
};

/// Moves each record's delivery to its next state, and returns the ids of
/// those it moved. A delivery is moved only while it carries the claim its
/// record was made under (a replay's claim is the replay's, read before):
/// one whose claim was superseded, or which was deleted meanwhile (its
/// endpoint removed), is not, and its record is dropped.
pub(super) async fn move_deliveries<C: ConnectionTrait>(
    txn: &C,
    chunk: &[&AttemptRecord],
    now_ms: i64,
) -> Result<HashSet<String>, StoreError> {
    if chunk.is_empty() {
        return Ok(HashSet::new());
    }
    let backend = txn.get_database_backend();
    let mut source = RowSource::new(backend, 8);
    for r in chunk {
        let (state, next_at) = r.next.written(now_ms);
        // A scheduled attempt is fenced by the delivery's claim; a
        // replay's fence is the replay row's (`None`: not checked here).
        let claim = r.replay_id.is_none().then_some(r.claim_seq);
        source.push([
            r.delivery_id.clone().into(),
            state.into(),
            next_at.into(),
            Value::from(r.status_code.map(i64::from)),
            Value::from(Some(i64::from(r.latency_ms))),
            Value::from(r.error.as_ref().map(|e| e.0.as_str().to_string())),
            // Only scheduled attempts move the delivery along its schedule.
            i64::from(r.trigger == Trigger::Scheduled).into(),
            Value::from(claim),
        ]);
    }
    // The source's columns are named column1… on both backends.
    let (table, rows) = source.table();
    let mut values: Vec<Value> = Vec::with_capacity(1 + rows.len());
    values.push(now_ms.into());
    values.extend(rows);
    let rows = txn
        .query_all_raw(sql(
            backend,
            &format!(
                "UPDATE delivery SET \
                 state = CASE WHEN v.column2 = 'unchanged' THEN delivery.state \
                 WHEN v.column2 = 'failed' AND EXISTS (SELECT 1 FROM endpoint e \
                 WHERE e.id = delivery.endpoint_id AND e.status <> 'active') THEN 'paused' \
                 ELSE v.column2 END, \
                 next_attempt_at = CASE WHEN v.column2 = 'unchanged' THEN delivery.next_attempt_at ELSE v.column3 END, \
                 attempt_count = delivery.attempt_count + 1, scheduled_attempts = delivery.scheduled_attempts + v.column7, \
                 last_status = v.column4, last_latency_ms = v.column5, \
                 last_error_category = v.column6, updated_at = ?, \
                 holding = CASE WHEN v.column2 = 'dead' THEN {HOLD_IF_ORDERED} \
                 WHEN v.column2 = 'unchanged' THEN delivery.holding ELSE 0 END \
                 FROM {table} AS v WHERE delivery.id = v.column1 \
                 AND (v.column8 IS NULL OR delivery.claim_seq = v.column8) \
                 RETURNING delivery.id"
            ),
            values,
        ))
        .await?;
    rows.iter()
        .map(|r| r.try_get::<String>("", "id").map_err(StoreError::from))
        .collect()
}

/// Stores the attempts of deliveries [`move_deliveries`] moved.
pub(super) async fn insert_attempts<C: ConnectionTrait>(
    txn: &C,
    kept: &[&AttemptRecord],
) -> Result<(), StoreError> {
    if kept.is_empty() {
        return Ok(());
    }
    let mut source = RowSource::new(txn.get_database_backend(), 14);
    for r in kept {
        source.push([
            r.id.clone().into(),
            r.delivery_id.clone().into(),
            (r.attempt_no as i32).into(),
            r.trigger.as_str().into(),
            r.started_at.into(),
            Value::from(Some(r.latency_ms as i32)),
            Value::from(r.status_code.map(i32::from)),
            Value::from(r.error.as_ref().map(|e| e.0.as_str().to_string())),
            Value::from(r.error.as_ref().map(|e| e.1.clone())),
            Value::from(r.excerpt.clone()),
            Value::from(r.remote_addr.clone()),
            Value::from(r.url.clone()),
            Value::from(r.next.retry_at()),
            Value::from(r.location.clone()),
        ]);
    }
    let (rows, values) = source.insert_rows();
    txn.execute_raw(sql(
        txn.get_database_backend(),
        &format!(
            "INSERT INTO attempt (id, delivery_id, attempt_no, trigger, started_at, latency_ms, status_code, \
             error_category, error_detail, response_excerpt, remote_addr, url, next_attempt_at, location) \
             {rows}"
        ),
        values,
    ))
    .await?;
    Ok(())
}

/// Ends the replays whose attempts were stored.
pub(super) async fn delete_replays<C: ConnectionTrait>(
    txn: &C,
    kept: &[&AttemptRecord],
) -> Result<(), StoreError> {
    let replays: Vec<Value> = kept
        .iter()
        .filter_map(|r| r.replay_id.clone())
        .map(Value::from)
        .collect();
    if replays.is_empty() {
        return Ok(());
    }
    let n = replays.len();
    txn.execute_raw(sql(
        txn.get_database_backend(),
        &format!("DELETE FROM replay WHERE id IN ({})", placeholders(n)),
        replays,
    ))
    .await?;
    Ok(())
}
