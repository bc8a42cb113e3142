//! The fanout's claim: unpublished events become one delivery per subscribed,
//! active endpoint of the event's own partner, and get their feed position, in
//! one transaction.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, DbBackend, Value};

use super::{
    StoreError, fanout_plan as plan, placeholders, row_source::RowSource, sql,
    subscribers::Subscriber,
};
use crate::{
    catalog::{Catalog, render::Rendering},
    domain::{
        ordering::place,
        renditions::{self, Renditions},
    },
};

pub use super::fanout_plan::{Fanout, Preclaim, Publication, Published, PublishedEvent, Routed};

/// In the caller's transaction: one delivery per subscribed, active endpoint
/// of each event's own partner, the work announced to the other instances,
/// and the events' feed positions. `numbered`: the events were stored with
/// their feed positions already, from this first one on, in this order (the
/// fast path takes the counter before it inserts them); otherwise the feed
/// counter is taken last, so that concurrent publishers wait for each other
/// only for their commit.
pub async fn publish(
    txn: &impl ConnectionTrait,
    catalog: &Catalog,
    events: &[Published<'_>],
    now_ms: i64,
    instance_id: &str,
    preclaim: &Preclaim<'_>,
    numbered: Option<i64>,
) -> Result<Publication, StoreError> {
    let subscribers = subscribers_of(txn, events).await?;
    let to = To {
        catalog,
        subscribers: &subscribers,
        instance_id,
        preclaim,
    };
    publish_to(txn, &to, events, now_ms, numbered).await
}

/// The active endpoints of `events`' partners, by partner.
pub async fn subscribers_of(
    db: &impl ConnectionTrait,
    events: &[Published<'_>],
) -> Result<HashMap<String, Vec<Subscriber>>, StoreError> {
    let partners = partners_of(events);
    super::subscribers::active(db, db.get_database_backend(), &partners).await
}

/// The partners of `events`, each once.
pub fn partners_of<'a>(events: &[Published<'a>]) -> Vec<&'a str> {
    let mut partners: Vec<&str> = events.iter().map(|e| e.partner_id).collect();
    partners.sort_unstable();
    partners.dedup();
    partners
}

/// Where a publication goes, and how this instance takes part.
pub struct To<'a> {
    pub catalog: &'a Catalog,
    /// The active endpoints, by partner (`subscribers_of`).
    pub subscribers: &'a HashMap<String, Vec<Subscriber>>,
    pub instance_id: &'a str,
    pub preclaim: &'a Preclaim<'a>,
}

/// [`publish`] to subscribers already read.
pub async fn publish_to(
    txn: &impl ConnectionTrait,
    to: &To<'_>,
    events: &[Published<'_>],
    now_ms: i64,
    numbered: Option<i64>,
) -> Result<Publication, StoreError> {
    let routed = plan::routed(to.catalog, to.subscribers, events);
    publish_routed(txn, to, events, routed, now_ms, numbered).await
}

/// [`publish`] of a batch already routed to its subscribers.
pub async fn publish_routed(
    txn: &impl ConnectionTrait,
    to: &To<'_>,
    events: &[Published<'_>],
    routed: Routed<'_>,
    now_ms: i64,
    numbered: Option<i64>,
) -> Result<Publication, StoreError> {
    let backend = txn.get_database_backend();
    let Routed { mut rows, mut out } = routed;
    // Ordered deliveries are placed behind what their subjects have under
    // way, which needs every earlier publisher's commit: the feed counter
    // is taken first (and gives them their events' feed positions).
    let ordered = rows.iter().any(|r| r.ordering_key.is_some());
    let first_seq = match numbered {
        Some(first) => Some(first),
        None if ordered => Some(number_in_feed(txn, events, now_ms).await?),
        None => None,
    };
    if ordered {
        place_ordered(txn, &mut rows).await?;
    }
    plan::mark_claims(&mut rows, to.preclaim, &mut out);
    for chunk in rows.chunks(500) {
        let mut source = RowSource::new(backend, 13);
        for r in chunk {
            let row = plan::initial(r, to.preclaim, now_ms, first_seq);
            source.push([
                r.id.clone().into(),
                r.event_id.into(),
                r.endpoint_id.into(),
                row.state.into(),
                0i32.into(),
                row.due.into(),
                now_ms.into(),
                now_ms.into(),
                Value::from(row.claim_seq),
                Value::from(row.schema_version),
                Value::from(row.reason),
                Value::from(r.ordering_key.clone()),
                Value::from(row.ordering_seq),
            ]);
        }
        let (rows, values) = source.insert_rows();
        txn.execute_raw(sql(
            backend,
            &format!(
                "INSERT INTO delivery (id, event_id, endpoint_id, state, attempt_count, next_attempt_at, created_at, updated_at, claim_seq, schema_version, reason, ordering_key, ordering_seq) \
                 {rows} ON CONFLICT (event_id, endpoint_id) DO NOTHING"
            ),
            values,
        ))
        .await?;
    }
    store_projections(txn, events, &out.projected).await?;
    out.claimed = plan::claimed(rows, events, to.preclaim, now_ms);
    // Endpoints held here need no notice: this instance hands their work
    // to its own actors (and hears its own notices as nothing).
    announce_work(txn, to.instance_id, &work_elsewhere(&out, to.preclaim)).await?;
    if first_seq.is_none() {
        number_in_feed(txn, events, now_ms).await?;
    }
    Ok(out)
}

/// The endpoints given work that other instances hold (or nobody does):
/// their owners are told.
pub fn work_elsewhere<'a>(out: &'a Publication, preclaim: &Preclaim<'_>) -> Vec<&'a str> {
    out.fanout
        .deliveries
        .keys()
        .map(String::as_str)
        .filter(|e| !(preclaim.held)(e))
        .collect()
}

/// Places the ordered rows (given in feed order) behind whatever their
/// subjects have under way.
async fn place_ordered(
    txn: &impl ConnectionTrait,
    rows: &mut [plan::Row<'_>],
) -> Result<(), StoreError> {
    let subjects: Vec<(String, String)> = rows
        .iter()
        .filter_map(|r| Some((r.endpoint_id.to_string(), r.ordering_key.clone()?)))
        .collect();
    let busy = super::ordering::busy(txn, &subjects).await?;
    // A skipped row (no rendering) is closed: it holds no subject up.
    let open = |r: &plan::Row<'_>| r.rendering != Rendering::Skipped;
    let places = place(
        rows.iter()
            .map(|r| (r.endpoint_id, r.ordering_key.as_deref().filter(|_| open(r)))),
        &busy,
    );
    for (r, p) in rows.iter_mut().zip(places) {
        r.place = p;
    }
    Ok(())
}

/// Stores the renditions projected for pinned endpoints with their events,
/// so that every retry sends the same bytes.
async fn store_projections(
    txn: &impl ConnectionTrait,
    events: &[Published<'_>],
    projected: &HashMap<String, Renditions>,
) -> Result<(), StoreError> {
    for e in events {
        let Some(new) = projected.get(e.id) else {
            continue;
        };
        let mut all = e.renditions.clone();
        all.extend(new.iter().map(|(v, d)| (*v, d.clone())));
        txn.execute_raw(sql(
            txn.get_database_backend(),
            "UPDATE outbox_event SET renditions = ? WHERE event_id = ?",
            vec![renditions::to_text(&all).into(), e.id.into()],
        ))
        .await?;
    }
    Ok(())
}

/// Takes the next `n` feed positions; returns the first. The counter row
/// stays locked until the transaction ends, so positions follow commit order.
pub async fn take_feed_positions(txn: &impl ConnectionTrait, n: usize) -> Result<i64, StoreError> {
    let n = n as i64;
    let end: i64 = txn
        .query_one_raw(sql(
            txn.get_database_backend(),
            "UPDATE feed_counter SET value = value + ? WHERE id = 1 RETURNING value",
            vec![n.into()],
        ))
        .await?
        .ok_or_else(|| StoreError::Corrupt("the feed_counter row is missing".into()))?
        .try_get("", "value")?;
    Ok(end - n + 1)
}

/// Marks the events published and gives them the next feed positions, in
/// their order; returns the first one's.
async fn number_in_feed(
    txn: &impl ConnectionTrait,
    events: &[Published<'_>],
    now_ms: i64,
) -> Result<i64, StoreError> {
    let backend = txn.get_database_backend();
    let first = take_feed_positions(txn, events.len()).await?;
    let mut next = first;
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
    Ok(first)
}

/// The channel on which PostgreSQL tells every instance, at commit, which
/// endpoints just got deliveries: their owner claims at once instead of at
/// its next poll. The payload is `<instance>|<endpoint>,<endpoint>…`.
pub const WORK_CHANNEL: &str = "hookd_work";

/// At most this many endpoint ids per notification (PostgreSQL caps a
/// payload at 8000 bytes).
const IDS_PER_NOTICE: usize = 100;

async fn announce_work(
    txn: &impl ConnectionTrait,
    instance_id: &str,
    endpoints: &[&str],
) -> Result<(), StoreError> {
    if txn.get_database_backend() != DbBackend::Postgres {
        return Ok(());
    }
    for payload in work_notices(instance_id, endpoints) {
        txn.execute_raw(sql(
            DbBackend::Postgres,
            "SELECT pg_notify(?, ?)",
            vec![WORK_CHANNEL.into(), payload.into()],
        ))
        .await?;
    }
    Ok(())
}

/// The work notices' payloads that tell the other instances of work for
/// `endpoints`, from `instance_id`.
pub fn work_notices(instance_id: &str, endpoints: &[&str]) -> Vec<String> {
    endpoints
        .chunks(IDS_PER_NOTICE)
        .map(|ids| format!("{instance_id}|{}", ids.join(",")))
        .collect()
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
