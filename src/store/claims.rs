//! An endpoint actor's claims: its due deliveries and manual replays, each
//! claim fenced by the endpoint's lease (only the owner, under its epoch,
//! with a fresh heartbeat, can claim) and numbered (`claim_seq`), so that a
//! record or a release by a claim that was superseded changes nothing.

use sea_orm::{ConnectionTrait, Value};

pub use super::claimed::Claimed;
use super::{
    StoreError,
    claimed::claimed_row,
    cluster::Fence,
    ordering::{HOLD_IF_ORDERED, Subject},
    placeholders,
    row_source::not_in,
    skip_locked, sql,
};

/// Claims up to `limit` due deliveries of one endpoint, leased until
/// `lease_until`, while `fence` holds: the earliest due first, and of those
/// due at once the oldest; returned oldest first. `held`: what the claiming
/// actor holds (queued, in flight, or waiting for its record), never claimed
/// again by it even once its lease time has passed: it would be sent twice.
pub async fn claim_due(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    fence: &Fence,
    (now_ms, lease_until): (i64, i64),
    held: &[String],
    limit: u32,
) -> Result<Vec<Claimed>, StoreError> {
    let backend = db.get_database_backend();
    let (fenced, fence_values) = fence.condition(backend, endpoint_id);
    let (not_held, held_values) = not_in(backend, "id", held);
    let text = format!(
        "UPDATE delivery SET state = 'delivering', next_attempt_at = ?, updated_at = ?, claim_seq = claim_seq + 1 \
         WHERE id IN (\
           SELECT id FROM delivery WHERE endpoint_id = ? AND state IN ('pending', 'failed', 'delivering') \
           AND next_attempt_at <= ?{fenced}{not_held} ORDER BY next_attempt_at, id LIMIT ?{}) \
         RETURNING {}",
        skip_locked(backend),
        super::claimed::CLAIMED_COLUMNS
    );
    let mut values = vec![
        lease_until.into(),
        now_ms.into(),
        endpoint_id.into(),
        now_ms.into(),
    ];
    values.extend(fence_values);
    values.extend(held_values);
    values.push(i64::from(limit).into());
    let mut claimed = super::query_all(db, sql(backend, &text, values), |r| {
        claimed_row(r, lease_until)
    })
    .await?;
    // `RETURNING` follows no order on PostgreSQL: oldest first again (a
    // delivery's id is a ULID, its creation time first).
    claimed.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(claimed)
}

/// When this endpoint's earliest unfinished delivery is due, if it has one.
pub async fn next_due(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    held_deliveries: &[String],
    held_replays: &[String],
) -> Result<Option<i64>, StoreError> {
    // What the caller holds (queued or in flight) is not due to it: it records
    // those outcomes and knows any retry time itself. Counting their lease
    // ends would hold a retry due in 5 s back until a 60 s lease ran out.
    // Anyone else's lease (a crashed instance's) is due when it ends.
    let backend = db.get_database_backend();
    let (deliveries, delivery_values) = not_in(backend, "id", held_deliveries);
    let (replays, replay_values) = not_in(backend, "id", held_replays);
    let text = format!(
        "SELECT MIN(due) AS due FROM (\
           SELECT MIN(next_attempt_at) AS due FROM delivery WHERE endpoint_id = ? \
           AND state IN ('pending', 'failed', 'delivering'){deliveries} \
           UNION ALL SELECT MIN(next_attempt_at) AS due FROM replay WHERE endpoint_id = ?{replays}) AS t",
    );
    let mut values: Vec<Value> = vec![endpoint_id.into()];
    values.extend(delivery_values);
    values.push(endpoint_id.into());
    values.extend(replay_values);
    let row = db.query_one_raw(sql(backend, &text, values)).await?;
    Ok(match row {
        Some(r) => r.try_get::<Option<i64>>("", "due")?,
        None => None,
    })
}

/// Claims up to `limit` due manual replays of one endpoint, leased until
/// `lease_until` while `fence` holds, with the deliveries they replay.
pub async fn claim_replays(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    fence: &Fence,
    now_ms: i64,
    lease_until: i64,
    limit: u32,
) -> Result<Vec<Claimed>, StoreError> {
    let backend = db.get_database_backend();
    let (fenced, fence_values) = fence.condition(backend, endpoint_id);
    let text = format!(
        "UPDATE replay SET next_attempt_at = ?, claim_seq = claim_seq + 1 WHERE id IN (\
           SELECT id FROM replay WHERE endpoint_id = ? AND next_attempt_at <= ?{fenced} \
           ORDER BY next_attempt_at LIMIT ?{}) RETURNING id, delivery_id, claim_seq",
        skip_locked(backend)
    );
    let mut values = vec![lease_until.into(), endpoint_id.into(), now_ms.into()];
    values.extend(fence_values);
    values.push(i64::from(limit).into());
    let replays: Vec<(String, String, i64)> =
        super::query_all(db, sql(backend, &text, values), |r| {
            Ok((
                r.try_get("", "id")?,
                r.try_get("", "delivery_id")?,
                r.try_get("", "claim_seq")?,
            ))
        })
        .await?;
    if replays.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Value> = replays
        .iter()
        .map(|(_, d, _)| Value::from(d.clone()))
        .collect();
    let deliveries: std::collections::HashMap<String, Claimed> = super::query_all(
        db,
        sql(
            backend,
            &format!(
                "SELECT {} FROM delivery WHERE id IN ({})",
                super::claimed::CLAIMED_COLUMNS,
                placeholders(ids.len())
            ),
            ids,
        ),
        |r| claimed_row(r, lease_until),
    )
    .await?
    .into_iter()
    .map(|c| (c.id.clone(), c))
    .collect();
    Ok(replays
        .into_iter()
        .filter_map(|(replay, delivery, claim_seq)| {
            deliveries.get(&delivery).map(|c| Claimed {
                replay_id: Some(replay),
                claim_seq,
                ..c.clone()
            })
        })
        .collect())
}

/// When a claimed delivery was due before its claim took it: a fresh one
/// when it was created, one attempted before when it was claimed (a claim
/// takes only due rows). The incident watch dates claimed rows alike.
const WAS_DUE: &str = "CASE WHEN attempt_count = 0 THEN created_at ELSE updated_at END";

/// Returns claimed deliveries to the queue unattempted (an actor stopping, or
/// a circuit that opened while they waited), due at `due_at` if that is
/// after `now_ms` (a circuit's time); else due when they were due before
/// their claim, so that a backlog handed back keeps its age and its place
/// (it is neither hidden from the incident watch nor sent behind younger
/// work). Each is given as (delivery, claim_seq): one claimed again since
/// is left alone.
pub async fn release(
    db: &sea_orm::DatabaseConnection,
    claims: &[(String, i64)],
    due_at: i64,
    now_ms: i64,
) -> Result<(), StoreError> {
    for_claims(
        db,
        &format!(
            "UPDATE delivery SET state = CASE WHEN attempt_count = 0 THEN 'pending' ELSE 'failed' END, \
             next_attempt_at = CASE WHEN ? > ? THEN ? ELSE {WAS_DUE} END \
             WHERE state = 'delivering' AND ({{claims}})"
        ),
        vec![due_at.into(), now_ms.into(), due_at.into()],
        claims,
    )
    .await
}

/// Returns claimed manual replays unattempted, due at `at`: a replay waits
/// for no circuit's cool-down (it goes through an open circuit as its
/// probe), so it is handed back due at once, not at the circuit's time.
pub async fn release_replays(
    db: &sea_orm::DatabaseConnection,
    claims: &[(String, i64)],
    at: i64,
) -> Result<(), StoreError> {
    for_claims(
        db,
        "UPDATE replay SET next_attempt_at = ? WHERE {claims}",
        vec![at.into()],
        claims,
    )
    .await
}

/// Makes `endpoint_id`'s waiting deliveries due after `now` and up to
/// `until` due at `now`: its circuit closed before the time they were handed
/// back for.
pub async fn bring_forward(
    db: &sea_orm::DatabaseConnection,
    endpoint_id: &str,
    now: i64,
    until: i64,
) -> Result<(), StoreError> {
    let text = "UPDATE delivery SET next_attempt_at = ? WHERE endpoint_id = ? \
                AND state IN ('pending', 'failed') AND next_attempt_at > ? AND next_attempt_at <= ?";
    let values: Vec<Value> = vec![now.into(), endpoint_id.into(), now.into(), until.into()];
    db.execute_raw(sql(db.get_database_backend(), text, values))
        .await?;
    Ok(())
}

/// Moves the lease of claims whose attempts wait to be recorded to
/// `lease_until`, so that no other claim takes them meanwhile. Claims are
/// (delivery or replay id, claim_seq); one claimed again since is left alone.
pub async fn extend(
    db: &sea_orm::DatabaseConnection,
    deliveries: &[(String, i64)],
    replays: &[(String, i64)],
    lease_until: i64,
) -> Result<(), StoreError> {
    for_claims(
        db,
        "UPDATE delivery SET next_attempt_at = ? WHERE state = 'delivering' AND ({claims})",
        vec![lease_until.into()],
        deliveries,
    )
    .await?;
    for_claims(
        db,
        "UPDATE replay SET next_attempt_at = ? WHERE {claims}",
        vec![lease_until.into()],
        replays,
    )
    .await
}

/// Runs `text` (one `?` for `at`, then `{claims}`) for each chunk of claims.
async fn for_claims(
    db: &sea_orm::DatabaseConnection,
    text: &str,
    first: Vec<Value>,
    claims: &[(String, i64)],
) -> Result<(), StoreError> {
    for chunk in claims.chunks(200) {
        let mut values: Vec<Value> = first.clone();
        for (id, seq) in chunk {
            values.extend([Value::from(id.clone()), Value::from(*seq)]);
        }
        let pairs = vec!["(id = ? AND claim_seq = ?)"; chunk.len()].join(" OR ");
        let text = text.replace("{claims}", &format!("({pairs})"));
        db.execute_raw(sql(db.get_database_backend(), &text, values))
            .await?;
    }
    Ok(())
}

/// Closes claimed work that no longer qualifies for its endpoint, never
/// sent: a scheduled delivery becomes `cancelled` with `reason`; a replay is
/// dropped (its delivery keeps the state it had). Claims are (id,
/// claim_seq): one claimed again since is left alone.
pub async fn cancel(
    db: &sea_orm::DatabaseConnection,
    delivery: Option<(&str, i64)>,
    replay: Option<(&str, i64)>,
    reason: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    let backend = db.get_database_backend();
    if let Some((id, seq)) = delivery {
        let subjects = super::query_all(
            db,
            sql(
                backend,
                "UPDATE delivery SET state = 'cancelled', reason = ?, updated_at = ? \
                 WHERE state = 'delivering' AND id = ? AND claim_seq = ? RETURNING endpoint_id, ordering_key",
                vec![reason.into(), now_ms.into(), id.into(), seq.into()],
            ),
            subject_of,
        )
        .await?;
        advance(db, subjects, now_ms).await?;
    }
    if let Some((id, seq)) = replay {
        db.execute_raw(sql(
            backend,
            "DELETE FROM replay WHERE id = ? AND claim_seq = ?",
            vec![id.into(), seq.into()],
        ))
        .await?;
    }
    Ok(())
}

/// Marks claimed deliveries dead without an attempt (past their maximum age).
pub async fn expire(
    db: &sea_orm::DatabaseConnection,
    ids: &[String],
    now_ms: i64,
) -> Result<(), StoreError> {
    let mut values: Vec<Value> = vec![now_ms.into()];
    values.extend(ids.iter().map(|i| Value::from(i.clone())));
    let subjects = super::query_all(
        db,
        sql(
            db.get_database_backend(),
            &format!(
                "UPDATE delivery SET state = 'dead', last_error_category = 'internal', updated_at = ?, \
                 holding = {HOLD_IF_ORDERED} WHERE state = 'delivering' AND id IN ({}) \
                 RETURNING endpoint_id, ordering_key",
                placeholders(ids.len())
            ),
            values,
        ),
        subject_of,
    )
    .await?;
    advance(db, subjects, now_ms).await
}

/// The subject of a row a statement returned (`endpoint_id`,
/// `ordering_key`), if it is ordered.
fn subject_of(r: &sea_orm::QueryResult) -> Result<Option<Subject>, sea_orm::DbErr> {
    r.try_get::<Option<String>>("", "ordering_key")?
        .map(|key| r.try_get::<String>("", "endpoint_id").map(|e| (e, key)))
        .transpose()
}

/// Advances the subjects of closed rows (those that are ordered).
async fn advance(
    db: &impl ConnectionTrait,
    subjects: Vec<Option<Subject>>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let subjects: Vec<Subject> = subjects.into_iter().flatten().collect();
    if !subjects.is_empty() {
        super::ordering::advance(db, &subjects, now_ms).await?;
    }
    Ok(())
}
