//! The fanout's claim: unpublished events become one delivery per subscribed,
//! active endpoint of the event's own partner, and get their feed position, in
//! one transaction.

use std::collections::{BTreeMap, HashMap};

use sea_orm::{ConnectionTrait, DbBackend, TransactionTrait, Value};

use super::{StoreError, claims::Claimed, placeholders, skip_locked, sql};
use crate::domain::{ids::new_id, subscription::subscribes};

/// What one claim did.
#[derive(Debug, Default, Clone)]
pub struct Fanout {
    pub events: usize,
    /// Endpoint id → deliveries created for it.
    pub deliveries: BTreeMap<String, usize>,
}

struct Subscriber {
    id: String,
    event_types: Vec<String>,
}

/// Claims up to `limit` unpublished events and fans them out.
pub async fn claim_batch(
    db: &sea_orm::DatabaseConnection,
    limit: u32,
    now_ms: i64,
    instance_id: &str,
) -> Result<Fanout, StoreError> {
    let backend = db.get_database_backend();
    let txn = db.begin().await?;
    // On SQLite, the write lock before any read (so the transaction cannot
    // fail to upgrade). PostgreSQL takes the feed counter only at the end of
    // `publish`, and only when there is something to publish: a poll that
    // finds nothing must not hold the lock every publisher needs (an
    // instance paused mid-poll would stall every other instance's ingest).
    super::write_lock_first(&txn).await?;

    let events = super::query_all(
        &txn,
        sql(
            backend,
            &format!(
                "SELECT event_id, partner_id, type, subject_id FROM outbox_event WHERE published_at IS NULL \
                 ORDER BY created_at, event_id LIMIT ?{}",
                skip_locked(backend)
            ),
            vec![i64::from(limit).into()],
        ),
        |r| {
            Ok((
                r.try_get::<String>("", "event_id")?,
                r.try_get::<String>("", "partner_id")?,
                r.try_get::<String>("", "type")?,
                r.try_get::<Option<String>>("", "subject_id")?,
            ))
        },
    )
    .await?;
    if events.is_empty() {
        txn.rollback().await?;
        return Ok(Fanout::default());
    }

    let events: Vec<Published<'_>> = events
        .iter()
        .map(|(id, partner_id, event_type, subject_id)| Published {
            id,
            partner_id,
            event_type,
            subject_id: subject_id.as_deref(),
        })
        .collect();
    let done = publish(&txn, &events, now_ms, instance_id, &Preclaim::none()).await?;
    txn.commit().await?;
    Ok(done.fanout)
}

/// An event as publishing needs it.
#[derive(Debug, Clone, Copy)]
pub struct Published<'a> {
    pub id: &'a str,
    pub partner_id: &'a str,
    pub event_type: &'a str,
    pub subject_id: Option<&'a str>,
}

/// Which new deliveries to create already claimed, for this instance's own
/// actors to send at once: those of endpoints it holds (`owned`), at most
/// `per_endpoint` each, leased until `lease_until`.
pub struct Preclaim<'a> {
    pub owned: &'a dyn Fn(&str) -> bool,
    pub per_endpoint: usize,
    pub lease_until: i64,
}

impl Preclaim<'_> {
    pub fn none() -> Preclaim<'static> {
        Preclaim {
            owned: &|_| false,
            per_endpoint: 0,
            lease_until: 0,
        }
    }
}

/// What publishing did: deliveries per endpoint, and those created claimed.
#[derive(Debug, Default)]
pub struct Publication {
    pub fanout: Fanout,
    /// (endpoint, the claimed delivery), in event order.
    pub claimed: Vec<(String, Claimed)>,
}

/// In the caller's transaction: one delivery per subscribed, active endpoint
/// of each event's own partner, the work announced to the other instances,
/// and the events' feed positions. The feed counter is taken last, so that
/// concurrent publishers wait for each other only for their commit.
pub async fn publish(
    txn: &impl ConnectionTrait,
    events: &[Published<'_>],
    now_ms: i64,
    instance_id: &str,
    preclaim: &Preclaim<'_>,
) -> Result<Publication, StoreError> {
    let backend = txn.get_database_backend();
    let mut partners: Vec<&str> = events.iter().map(|e| e.partner_id).collect();
    partners.sort_unstable();
    partners.dedup();
    let subscribers = active_subscribers(txn, backend, &partners).await?;

    let mut out = Publication::default();
    out.fanout.events = events.len();
    // (delivery, event, endpoint, claimed?)
    let mut rows: Vec<(String, &str, &str, bool)> = Vec::new();
    for e in events {
        for s in subscribers.get(e.partner_id).into_iter().flatten() {
            // Operational events about an endpoint go to the partner's other endpoints.
            let about_itself =
                e.event_type.starts_with("endpoint.") && e.subject_id == Some(s.id.as_str());
            if subscribes(&s.event_types, e.event_type) && !about_itself {
                let n = out.fanout.deliveries.entry(s.id.clone()).or_default();
                *n += 1;
                let claimed = *n <= preclaim.per_endpoint && (preclaim.owned)(&s.id);
                rows.push((new_id("dlv"), e.id, &s.id, claimed));
            }
        }
    }
    for chunk in rows.chunks(500) {
        let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 8);
        for (id, event_id, endpoint_id, claimed) in chunk {
            let (state, due, seq) = if *claimed {
                ("delivering", preclaim.lease_until, 1)
            } else {
                ("pending", now_ms, 0)
            };
            values.extend([
                id.clone().into(),
                (*event_id).into(),
                (*endpoint_id).into(),
                state.into(),
                due.into(),
                now_ms.into(),
                now_ms.into(),
                Value::from(seq),
            ]);
        }
        let tuples = vec!["(?, ?, ?, ?, 0, ?, ?, ?, ?)"; chunk.len()].join(", ");
        txn.execute_raw(sql(
            backend,
            &format!(
                "INSERT INTO delivery (id, event_id, endpoint_id, state, attempt_count, next_attempt_at, created_at, updated_at, claim_seq) \
                 VALUES {tuples} ON CONFLICT (event_id, endpoint_id) DO NOTHING"
            ),
            values,
        ))
        .await?;
    }
    out.claimed = rows
        .into_iter()
        .filter(|r| r.3)
        .map(|(id, event_id, endpoint_id, _)| {
            let claimed = Claimed {
                id,
                event_id: event_id.to_string(),
                attempt_count: 0,
                scheduled_attempts: 0,
                created_at: now_ms,
                replay_id: None,
                claim_seq: 1,
                lease_until: preclaim.lease_until,
            };
            (endpoint_id.to_string(), claimed)
        })
        .collect();
    announce_work(txn, instance_id, out.fanout.deliveries.keys()).await?;
    number_in_feed(txn, events, now_ms).await?;
    Ok(out)
}

/// Marks the events published and gives them the next feed positions.
async fn number_in_feed(
    txn: &impl ConnectionTrait,
    events: &[Published<'_>],
    now_ms: i64,
) -> Result<(), StoreError> {
    let backend = txn.get_database_backend();
    let n = events.len() as i64;
    let end: i64 = txn
        .query_one_raw(sql(
            backend,
            "UPDATE feed_counter SET value = value + ? WHERE id = 1 RETURNING value",
            vec![n.into()],
        ))
        .await?
        .ok_or_else(|| StoreError::Corrupt("the feed_counter row is missing".into()))?
        .try_get("", "value")?;
    let mut next = end - n + 1;
    for chunk in events.chunks(500) {
        let mut values: Vec<Value> = vec![now_ms.into()];
        let mut cases = String::new();
        for e in chunk {
            cases.push_str(" WHEN ? THEN ?");
            values.push(e.id.into());
            values.push(next.into());
            next += 1;
        }
        values.extend(chunk.iter().map(|e| Value::from(e.id)));
        txn.execute_raw(sql(
            backend,
            &format!(
                "UPDATE outbox_event SET published_at = ?, feed_seq = CASE event_id{cases} END WHERE event_id IN ({})",
                placeholders(chunk.len())
            ),
            values,
        ))
        .await?;
    }
    Ok(())
}

async fn active_subscribers(
    db: &impl ConnectionTrait,
    backend: DbBackend,
    partners: &[&str],
) -> Result<HashMap<String, Vec<Subscriber>>, StoreError> {
    let rows = super::query_all(
        db,
        sql(
            backend,
            &format!(
                "SELECT id, partner_id, event_types FROM endpoint WHERE status = 'active' AND partner_id IN ({})",
                placeholders(partners.len())
            ),
            partners.iter().map(|p| Value::from(*p)).collect(),
        ),
        |r| {
            Ok((
                r.try_get::<String>("", "id")?,
                r.try_get::<String>("", "partner_id")?,
                r.try_get::<String>("", "event_types")?,
            ))
        },
    )
    .await?;
    let mut by_partner: HashMap<String, Vec<Subscriber>> = HashMap::new();
    for (id, partner_id, types) in rows {
        let event_types: Vec<String> = serde_json::from_str(&types)
            .map_err(|e| StoreError::Corrupt(format!("endpoint {id} event_types: {e}")))?;
        by_partner
            .entry(partner_id)
            .or_default()
            .push(Subscriber { id, event_types });
    }
    Ok(by_partner)
}

/// The channel on which PostgreSQL tells every instance, at commit, which
/// endpoints just got deliveries: their owner claims at once instead of at
/// its next poll. The payload is `<instance>|<endpoint>,<endpoint>…`.
pub const WORK_CHANNEL: &str = "hookd_work";

/// At most this many endpoint ids per notification (PostgreSQL caps a
/// payload at 8000 bytes).
const IDS_PER_NOTICE: usize = 100;

async fn announce_work<'a>(
    txn: &impl ConnectionTrait,
    instance_id: &str,
    endpoints: impl Iterator<Item = &'a String>,
) -> Result<(), StoreError> {
    if txn.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    let endpoints: Vec<&String> = endpoints.collect();
    for chunk in endpoints.chunks(IDS_PER_NOTICE) {
        let ids: Vec<&str> = chunk.iter().map(|s| s.as_str()).collect();
        let payload = format!("{instance_id}|{}", ids.join(","));
        txn.execute_raw(sql(
            DbBackend::Postgres,
            "SELECT pg_notify(?, ?)",
            vec![WORK_CHANNEL.into(), payload.into()],
        ))
        .await?;
    }
    Ok(())
}

/// The channel on which an instance tells the others, on PostgreSQL, that an
/// endpoint's settings, status or secrets changed: its owner reloads it at
/// once. The payload is `<instance>|<endpoint>`.
pub const CHANGED_CHANNEL: &str = "hookd_endpoint";

/// Tells the other instances that `endpoint_id` changed (PostgreSQL only).
pub async fn announce_change(
    db: &impl ConnectionTrait,
    instance_id: &str,
    endpoint_id: &str,
) -> Result<(), StoreError> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    db.execute_raw(sql(
        DbBackend::Postgres,
        "SELECT pg_notify(?, ?)",
        vec![
            CHANGED_CHANNEL.into(),
            format!("{instance_id}|{endpoint_id}").into(),
        ],
    ))
    .await?;
    Ok(())
}

/// Reads a work notification: (the instance that fanned out, the endpoints).
pub fn parse_work_notice(payload: &str) -> Option<(&str, Vec<&str>)> {
    let (instance, ids) = payload.split_once('|')?;
    Some((instance, ids.split(',').filter(|s| !s.is_empty()).collect()))
}

#[cfg(test)]
mod tests {
    use super::parse_work_notice;

    #[test]
    fn a_work_notice_names_its_sender_and_the_endpoints() {
        assert_eq!(
            parse_work_notice("ins_a|ep_1,ep_2"),
            Some(("ins_a", vec!["ep_1", "ep_2"]))
        );
        assert_eq!(parse_work_notice("ins_a|"), Some(("ins_a", vec![])));
        assert_eq!(parse_work_notice("garbage"), None);
    }
}
