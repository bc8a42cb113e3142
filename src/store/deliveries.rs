//! The group commit of attempt outcomes: attempts and the deliveries'
//! transitions, written together, each fenced by the claim that made it.

use sea_orm::ConnectionTrait;

use std::collections::HashMap;

use super::{
    StoreError,
    claimed::Claimed,
    ordering::{self, Subject},
    record_rows::{delete_replays, insert_attempts, move_deliveries},
    sql,
};
use crate::domain::ids::new_id;

pub use super::attempt_record::{AttemptRecord, NextState, Trigger};

/// The records of `batch` whose claim still stands, as far as it is read
/// here: the delivery (or, for a replay, the replay) carries the claim
/// number the attempt was made under. A record from a claim superseded
/// since (an instance paused past its lease, whose work was claimed again
/// elsewhere) is left out, so a stale owner's late write never wins.
///
/// On PostgreSQL the rows are locked here, in id order, until the batch
/// commits, so no claim slips in between and concurrent writers lock in
/// one order. On SQLite (one writer at a time) a delivery's claim is
/// checked by the UPDATE that moves it (`record_rows::move_deliveries`),
/// which saves a read of every row; only replays are read here.
async fn still_claimed<'a, C: ConnectionTrait>(
    txn: &C,
    batch: Vec<&'a AttemptRecord>,
) -> Result<Vec<&'a AttemptRecord>, StoreError> {
    let postgres = txn.get_database_backend() == sea_orm::DbBackend::Postgres;
    let lock = if postgres { " FOR UPDATE" } else { "" };
    let deliveries: Vec<String> = batch
        .iter()
        .filter(|r| r.replay_id.is_none() && postgres)
        .map(|r| r.delivery_id.clone())
        .collect();
    let replays: Vec<String> = batch.iter().filter_map(|r| r.replay_id.clone()).collect();
    let mut current = std::collections::HashMap::new();
    for (table, ids) in [("delivery", deliveries), ("replay", replays)] {
        if ids.is_empty() {
            continue;
        }
        let text =
            format!("SELECT id, claim_seq FROM {table} WHERE id IN ({{ids}}) ORDER BY id{lock}");
        let rows = super::query_in_chunks(txn, &text, &[], &ids, &[], |r| {
            Ok((
                r.try_get::<String>("", "id")?,
                r.try_get::<i64>("", "claim_seq")?,
            ))
        })
        .await?;
        current.extend(rows.into_iter().map(|(id, seq)| ((table, id), seq)));
    }
    Ok(batch
        .into_iter()
        .filter(|r| match &r.replay_id {
            Some(replay) => current.get(&("replay", replay.clone())) == Some(&r.claim_seq),
            None => {
                !postgres || current.get(&("delivery", r.delivery_id.clone())) == Some(&r.claim_seq)
            }
        })
        .collect())
}

/// The records of `batch` whose attempt id is not stored yet. After a
/// commit whose answer was lost (the database went away at that moment),
/// the recorder writes the batch again; what had landed is skipped, so no
/// attempt is recorded, or counted, twice.
async fn not_yet_recorded<'a, C: ConnectionTrait>(
    txn: &C,
    batch: &'a [AttemptRecord],
) -> Result<Vec<&'a AttemptRecord>, StoreError> {
    let ids: Vec<String> = batch.iter().map(|r| r.id.clone()).collect();
    let stored: std::collections::HashSet<String> = super::query_in_chunks(
        txn,
        "SELECT id FROM attempt WHERE id IN ({ids})",
        &[],
        &ids,
        &[],
        |r| r.try_get::<String>("", "id"),
    )
    .await?
    .into_iter()
    .collect();
    Ok(batch.iter().filter(|r| !stored.contains(&r.id)).collect())
}

/// Splits `items` into rounds in which no key appears twice; the n-th item
/// of a key goes in round n, so each key's items keep their order.
fn rounds_by_delivery<T>(items: Vec<T>, key: impl Fn(&T) -> &str) -> Vec<Vec<T>> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut rounds: Vec<Vec<T>> = Vec::new();
    for item in items {
        let n = seen.entry(key(&item).to_string()).or_insert(0);
        if rounds.len() <= *n {
            rounds.push(Vec::new());
        }
        rounds[*n].push(item);
        *n += 1;
    }
    rounds
}

/// Writes a batch of attempts and their delivery transitions in one
/// transaction (the group commit), inside `txn`. `again`: some of these
/// records may have landed already (a write whose answer was lost); those
/// are skipped by attempt id. A first write skips the look-up. A record
/// that closes the head of an ordered subject makes the next delivery of
/// the subject due, claimed for the endpoint's owner when `claim_until`
/// gives its lease (`Some` for the endpoints this instance holds).
pub async fn record<C: ConnectionTrait>(
    txn: &C,
    batch: &[AttemptRecord],
    now_ms: i64,
    again: bool,
    claim_until: &dyn Fn(&str) -> Option<i64>,
) -> Result<Recorded, StoreError> {
    let backend = txn.get_database_backend();
    if super::record_at_once::fits(backend, batch, again) {
        let recorded = super::record_at_once::write(txn, batch, now_ms).await?;
        let kept: Vec<&AttemptRecord> = batch
            .iter()
            .filter(|r| recorded.contains(&r.delivery_id))
            .collect();
        let superseded = batch.len() - kept.len();
        let successors = advance_subjects(txn, &[kept], now_ms, claim_until).await?;
        return Ok(Recorded {
            superseded,
            successors,
        });
    }
    let batch = if again {
        not_yet_recorded(txn, batch).await?
    } else {
        batch.iter().collect()
    };
    let total = batch.len();
    let batch = still_claimed(txn, batch).await?;
    // An UPDATE … FROM (VALUES …) applies one source row per target row:
    // two attempts of one delivery (a replay beside a scheduled attempt)
    // go in successive rounds, so each is counted and applied in order.
    let rounds = rounds_by_delivery(batch, |r| r.delivery_id.as_str());
    let mut kept_rounds = Vec::with_capacity(rounds.len());
    for round in &rounds {
        let mut kept_round = Vec::with_capacity(round.len());
        for chunk in round.chunks(200) {
            let moved = move_deliveries(txn, chunk, now_ms).await?;
            let kept: Vec<&AttemptRecord> = chunk
                .iter()
                .copied()
                .filter(|r| moved.contains(r.delivery_id.as_str()))
                .collect();
            insert_attempts(txn, &kept).await?;
            delete_replays(txn, &kept).await?;
            kept_round.extend(kept);
        }
        kept_rounds.push(kept_round);
    }
    let superseded = total - kept_rounds.iter().map(Vec::len).sum::<usize>();
    let rounds = kept_rounds;
    let successors = advance_subjects(txn, &rounds, now_ms, claim_until).await?;
    Ok(Recorded {
        superseded,
        successors,
    })
}

/// The every-day batch ([`super::record_at_once::fits`] holds, all
/// successes, no circuit moved) written on PostgreSQL as one statement with
/// no transaction around it; `None` (nothing written) when an endpoint of
/// the batch is marked failing, whose health the transaction must mend.
pub async fn record_alone(
    db: &sea_orm::DatabaseConnection,
    batch: &[AttemptRecord],
    now_ms: i64,
) -> Result<Option<Recorded>, StoreError> {
    let recorded = super::record_at_once::write_alone(db, batch, now_ms).await?;
    Ok(recorded.map(|recorded| Recorded {
        superseded: batch.len() - recorded.len(),
        successors: HashMap::new(),
    }))
}

/// What a group commit of attempts did.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Records left out because their claim was superseded (or their
    /// delivery deleted).
    pub superseded: usize,
    /// Closed delivery id → the next delivery of its subject, claimed for
    /// the endpoint's owner.
    pub successors: HashMap<String, Claimed>,
}

/// The next delivery of each subject whose head this batch closed becomes
/// due, in the same transaction; for the endpoints `claim_until` names, it
/// is claimed, and returned by the delivery that closed its subject's head.
async fn advance_subjects<C: ConnectionTrait>(
    txn: &C,
    rounds: &[Vec<&AttemptRecord>],
    now_ms: i64,
    claim_until: &dyn Fn(&str) -> Option<i64>,
) -> Result<HashMap<String, Claimed>, StoreError> {
    let closed: Vec<String> = rounds
        .iter()
        .flatten()
        .filter(|r| r.ordered && matches!(r.next, NextState::Delivered | NextState::Dead))
        .map(|r| r.delivery_id.clone())
        .collect();
    if closed.is_empty() {
        return Ok(HashMap::new());
    }
    let heads: Vec<Head> = super::query_in_chunks(
        txn,
        "SELECT id, endpoint_id, ordering_key FROM delivery WHERE id IN ({ids}) AND ordering_key IS NOT NULL",
        &[],
        &closed,
        &[],
        |r| {
            let subject = (r.try_get("", "endpoint_id")?, r.try_get("", "ordering_key")?);
            Ok((r.try_get::<String>("", "id")?, subject))
        },
    )
    .await?;
    let (owned, others): (Vec<&Head>, Vec<&Head>) = heads
        .iter()
        .partition(|(_, (endpoint, _))| claim_until(endpoint).is_some());
    let others: Vec<Subject> = others.into_iter().map(|(_, s)| s.clone()).collect();
    ordering::advance(txn, &others, now_ms).await?;
    let mut next: HashMap<Subject, Claimed> = HashMap::new();
    for (endpoint, subjects) in group_by_endpoint(&owned) {
        let Some(until) = claim_until(endpoint) else {
            continue;
        };
        next.extend(ordering::advance_claiming(txn, &subjects, now_ms, until).await?);
    }
    Ok(heads
        .into_iter()
        .filter_map(|(id, subject)| next.remove(&subject).map(|c| (id, c)))
        .collect())
}

/// A closed delivery and its subject.
type Head = (String, Subject);

/// Subjects by endpoint.
fn group_by_endpoint<'a>(heads: &[&'a Head]) -> HashMap<&'a str, Vec<Subject>> {
    let mut out: HashMap<&str, Vec<Subject>> = HashMap::new();
    for (_, (endpoint, key)) in heads {
        out.entry(endpoint.as_str())
            .or_default()
            .push((endpoint.clone(), key.clone()));
    }
    out
}

/// Queues a manual attempt of a delivery (it keeps its state and schedule).
pub async fn request_replay(
    db: &impl ConnectionTrait,
    delivery_id: &str,
    endpoint_id: &str,
    now_ms: i64,
) -> Result<String, StoreError> {
    let id = new_id("rpl");
    db.execute_raw(sql(
        db.get_database_backend(),
        "INSERT INTO replay (id, delivery_id, endpoint_id, requested_at, next_attempt_at) VALUES (?, ?, ?, ?, ?)",
        vec![id.clone().into(), delivery_id.into(), endpoint_id.into(), now_ms.into(), now_ms.into()],
    ))
    .await?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::rounds_by_delivery;

    #[test]
    fn a_delivery_appears_once_per_round_and_its_attempts_keep_their_order() {
        let items = vec![("d1", 1), ("d2", 1), ("d1", 2), ("d3", 1), ("d1", 3)];
        let rounds = rounds_by_delivery(items, |(d, _)| d);
        assert_eq!(
            rounds,
            vec![
                vec![("d1", 1), ("d2", 1), ("d3", 1)],
                vec![("d1", 2)],
                vec![("d1", 3)]
            ]
        );
        assert!(rounds_by_delivery(Vec::<(&str, i32)>::new(), |(d, _)| d).is_empty());
    }
}
