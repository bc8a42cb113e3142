//! The fanout's claim: unpublished events become one delivery per subscribed,
//! active endpoint of the event's own partner, and get their feed position, in
//! one transaction.

use std::collections::{BTreeMap, HashMap};

use sea_orm::{ConnectionTrait, DbBackend, Value};

use super::{StoreError, claims::Claimed, placeholders, sql};
use crate::{
    catalog::{
        Catalog,
        render::{NO_RENDERING, Rendering, choose},
    },
    domain::{
        filter::{EventView, FilterReason, Verdict},
        ids::new_id,
        ordering::{Place, place, subject_key},
        renditions::{self, Renditions},
        subscription::subscribes,
    },
};

/// What one claim did.
#[derive(Debug, Default, Clone)]
pub struct Fanout {
    pub events: usize,
    /// Events rejected: they fail the catalog (written around the API).
    pub rejected: usize,
    /// Endpoint id → deliveries created for it, due now (or claimed).
    pub deliveries: BTreeMap<String, usize>,
    /// Deliveries created waiting behind an earlier one of their subject.
    pub waiting: usize,
    /// The events published, when the claim was traced.
    pub published: Vec<PublishedEvent>,
    /// Deliveries not created because the event did not pass the
    /// endpoint's filter, by reason.
    pub filtered: BTreeMap<FilterReason, usize>,
}

/// A published event as its publication span names it.
#[derive(Debug, Clone)]
pub struct PublishedEvent {
    pub id: String,
    pub partner_id: String,
    pub event_type: String,
    pub trace: Option<crate::domain::trace::TraceContext>,
}

/// An event as publishing needs it.
#[derive(Debug, Clone, Copy)]
pub struct Published<'a> {
    pub id: &'a str,
    pub partner_id: &'a str,
    pub event_type: &'a str,
    pub subject_type: Option<&'a str>,
    pub subject_id: Option<&'a str>,
    /// The version `payload` is at, and the event's other renditions.
    pub schema_version: u32,
    pub payload: &'a str,
    pub renditions: &'a Renditions,
    /// When it was written (Unix ms): where its deliveries' window starts.
    pub created_at: i64,
}

/// Which new deliveries to create already claimed, for this instance's own
/// actors to send at once: those of endpoints it holds (`owned`), at most
/// `per_endpoint` each, leased until `lease_until`.
pub struct Preclaim<'a> {
    pub owned: &'a dyn Fn(&str) -> bool,
    /// Endpoints this instance holds: their work is announced to nobody
    /// (this instance wakes its own actors).
    pub held: &'a dyn Fn(&str) -> bool,
    pub per_endpoint: usize,
    pub lease_until: i64,
}

impl Preclaim<'_> {
    pub fn none() -> Preclaim<'static> {
        Preclaim {
            owned: &|_| false,
            held: &|_| false,
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
    /// Renditions projected for pinned endpoints, by event (now stored).
    pub projected: HashMap<String, Renditions>,
    /// Deliveries created `skipped`: no rendering at the pinned version.
    pub skipped: usize,
}

/// One delivery to create.
struct Row<'a> {
    id: String,
    /// The event's place in this batch.
    event: usize,
    event_id: &'a str,
    endpoint_id: &'a str,
    /// Its subject, when the endpoint orders and the event has one.
    ordering_key: Option<String>,
    claimed: bool,
    place: Place,
    rendering: Rendering,
}

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
    let backend = txn.get_database_backend();
    let mut partners: Vec<&str> = events.iter().map(|e| e.partner_id).collect();
    partners.sort_unstable();
    partners.dedup();
    let subscribers = super::subscribers::active(txn, backend, &partners).await?;

    let mut out = Publication::default();
    out.fanout.events = events.len();
    let mut rows: Vec<Row<'_>> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        // Read once, for the first endpoint with a filter.
        let mut data: Option<serde_json::Value> = None;
        for s in subscribers.get(e.partner_id).into_iter().flatten() {
            // Operational events about an endpoint go to the partner's other endpoints.
            let about_itself =
                e.event_type.starts_with("endpoint.") && e.subject_id == Some(s.id.as_str());
            if !subscribes(&s.event_types, e.event_type) || about_itself {
                continue;
            }
            if let Some(filter) = &s.filter {
                let data = data.get_or_insert_with(|| {
                    serde_json::from_str(e.payload).unwrap_or(serde_json::Value::Null)
                });
                if let Verdict::Filtered(reason) = filter.evaluate(&view(e, data)) {
                    *out.fanout.filtered.entry(reason).or_default() += 1;
                    continue;
                }
            }
            let pinned = s.pins.get(e.event_type).copied();
            let rendering = match out
                .projected
                .get(e.id)
                .and_then(|p| pinned.filter(|v| p.contains_key(v)))
            {
                // Projected already for another endpoint of this batch.
                Some(version) => Rendering::Stored { version },
                None => choose(
                    catalog,
                    e.event_type,
                    e.schema_version,
                    e.payload,
                    e.renditions,
                    pinned,
                ),
            };
            if let Rendering::Projected { version, data } = &rendering {
                out.projected
                    .entry(e.id.to_string())
                    .or_default()
                    .insert(*version, data.clone());
            }
            out.skipped += usize::from(rendering == Rendering::Skipped);
            let ordering_key = match (s.ordered, e.subject_type, e.subject_id) {
                (true, Some(t), Some(id)) => Some(subject_key(t, id)),
                _ => None,
            };
            rows.push(Row {
                id: new_id("dlv"),
                event: i,
                event_id: e.id,
                endpoint_id: &s.id,
                ordering_key,
                claimed: false,
                place: Place::Head,
                rendering,
            });
        }
    }
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
    for r in rows.iter_mut() {
        if r.rendering == Rendering::Skipped {
            continue;
        }
        // A waiting delivery needs no claim: closing its head makes it due.
        if r.place == Place::Waiting {
            out.fanout.waiting += 1;
            continue;
        }
        let n = out
            .fanout
            .deliveries
            .entry(r.endpoint_id.to_string())
            .or_default();
        *n += 1;
        r.claimed = r.place == Place::Head
            && *n <= preclaim.per_endpoint
            && (preclaim.owned)(r.endpoint_id);
    }
    for chunk in rows.chunks(500) {
        let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 12);
        for r in chunk {
            let (state, due, seq) = if r.claimed {
                ("delivering", preclaim.lease_until, 1)
            } else if r.rendering == Rendering::Skipped {
                ("skipped", now_ms, 0)
            } else if r.place == Place::Waiting {
                ("waiting", now_ms, 0)
            } else {
                ("pending", now_ms, 0)
            };
            let ordering_seq = match (&r.ordering_key, first_seq) {
                (Some(_), Some(first)) => Some(first + r.event as i64),
                _ => None,
            };
            let reason = (r.rendering == Rendering::Skipped).then_some(NO_RENDERING);
            values.extend([
                r.id.clone().into(),
                r.event_id.into(),
                r.endpoint_id.into(),
                state.into(),
                due.into(),
                now_ms.into(),
                now_ms.into(),
                Value::from(seq),
                Value::from(r.rendering.version().map(|v| v as i32)),
                Value::from(reason),
                Value::from(r.ordering_key.clone()),
                Value::from(ordering_seq),
            ]);
        }
        let tuples = vec!["(?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
        txn.execute_raw(sql(
            backend,
            &format!(
                "INSERT INTO delivery (id, event_id, endpoint_id, state, attempt_count, next_attempt_at, created_at, updated_at, claim_seq, schema_version, reason, ordering_key, ordering_seq) \
                 VALUES {tuples} ON CONFLICT (event_id, endpoint_id) DO NOTHING"
            ),
            values,
        ))
        .await?;
    }
    store_projections(txn, events, &out.projected).await?;
    out.claimed = rows
        .into_iter()
        .filter(|r| r.claimed)
        .map(|r| {
            let claimed = Claimed {
                id: r.id,
                event_id: r.event_id.to_string(),
                attempt_count: 0,
                scheduled_attempts: 0,
                created_at: now_ms,
                window_from: events[r.event].created_at,
                replay_id: None,
                claim_seq: 1,
                lease_until: preclaim.lease_until,
                schema_version: r.rendering.version(),
                ordered: r.ordering_key.is_some(),
            };
            (r.endpoint_id.to_string(), claimed)
        })
        .collect();
    // Endpoints held here need no notice: this instance hands their work
    // to its own actors (and hears its own notices as nothing).
    let elsewhere = out.fanout.deliveries.keys().filter(|e| !(preclaim.held)(e));
    announce_work(txn, instance_id, elsewhere).await?;
    if first_seq.is_none() {
        number_in_feed(txn, events, now_ms).await?;
    }
    Ok(out)
}

/// What a filter sees of `e`: its own partner's event, as the producer
/// sent it (`data` at the event's own version).
fn view<'a>(e: &Published<'a>, data: &'a serde_json::Value) -> EventView<'a> {
    EventView {
        event_type: e.event_type,
        subject: e.subject_type.zip(e.subject_id),
        data,
    }
}

/// Places the ordered rows (given in feed order) behind whatever their
/// subjects have under way.
async fn place_ordered(txn: &impl ConnectionTrait, rows: &mut [Row<'_>]) -> Result<(), StoreError> {
    let subjects: Vec<(String, String)> = rows
        .iter()
        .filter_map(|r| Some((r.endpoint_id.to_string(), r.ordering_key.clone()?)))
        .collect();
    let busy = super::ordering::busy(txn, &subjects).await?;
    // A skipped row (no rendering) is closed: it holds no subject up.
    let open = |r: &Row<'_>| r.rendering != Rendering::Skipped;
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
