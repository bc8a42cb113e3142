//! The common group commit of fresh events on PostgreSQL in one statement:
//! the feed positions taken, the events stored with them, their deliveries
//! created (those of endpoints held here already claimed) and the other
//! instances told, as one autocommitted statement of one shape, whatever
//! the group's size. Where a transaction took six round trips (BEGIN,
//! counter, events, subscribers, deliveries, COMMIT), this takes two: the
//! subscribers are read first, under the same isolation (each statement of
//! a READ COMMITTED transaction sees what was committed before it, no
//! more), and the rest is this statement.
//!
//! The subscribers may also come from `routing_cache`, read by an earlier
//! commit: the statement first compares each partner's fingerprint with the
//! rows it sees and, if one changed, writes nothing ([`AtOnce::Stale`]).
//!
//! It covers groups whose deliveries need nothing but inserts. Ordered
//! deliveries (placed behind what their subjects have under way, which must
//! be read after the counter is taken) and renditions projected for pinned
//! endpoints (stored with the event) take the transaction
//! (`fanout::publish_to`).

use std::sync::LazyLock;

use sea_orm::{ConnectionTrait, DbBackend, Value};
use serde::Serialize;

use super::{
    StoreError,
    fanout::{Publication, Published, To, WORK_CHANNEL, work_elsewhere, work_notices},
    fanout_plan::{self as plan, Row},
    sql,
    subscribers::{VERSIONS_NOW, fingerprint},
};
use crate::domain::event::NewEvent;

/// An event as the statement reads it.
#[derive(Serialize)]
struct EventRow<'a> {
    event_id: &'a str,
    partner_id: &'a str,
    kind: &'a str,
    subject_type: Option<&'a str>,
    subject_id: Option<&'a str>,
    subject_version: Option<i64>,
    occurred_at: i64,
    schema_version: String,
    payload: &'a str,
    correlation_id: Option<&'a str>,
    created_at: i64,
    /// Its place in the group, from 1.
    n: i64,
    renditions: Option<String>,
    traceparent: Option<String>,
    tracestate: Option<&'a str>,
}

/// A delivery as the statement reads it.
#[derive(Serialize)]
struct DeliveryRow<'a> {
    id: &'a str,
    event_id: &'a str,
    endpoint_id: &'a str,
    state: &'static str,
    due: i64,
    claim_seq: i64,
    schema_version: Option<i32>,
    reason: Option<&'static str>,
}

/// A partner of the group with the fingerprint of its endpoints as read.
#[derive(Serialize)]
struct SeenRow<'a> {
    partner_id: &'a str,
    fingerprint: String,
}

/// Whether the planned rows can be written by the one statement: no
/// delivery is ordered and nothing was projected.
pub fn fits(backend: DbBackend, rows: &[Row<'_>], out: &Publication) -> bool {
    backend == DbBackend::Postgres
        && out.projected.is_empty()
        && rows.iter().all(|r| r.ordering_key.is_none())
}

/// Stores `stored` (each event with the time it was written; `published`
/// is the same events as publishing sees them, of `partners`) and publishes
/// them in one statement, if [`fits`] holds for what they need and the
/// partners' endpoints are still as `to.subscribers` has them; else nothing
/// is written.
pub async fn publish<'a>(
    db: &impl ConnectionTrait,
    to: &To<'a>,
    partners: &[&str],
    stored: &[(&NewEvent, i64)],
    published: &[Published<'a>],
    now_ms: i64,
) -> Result<AtOnce<'a>, StoreError> {
    let routed = plan::routed(to.catalog, to.subscribers, published);
    if !fits(db.get_database_backend(), &routed.rows, &routed.out) {
        return Ok(AtOnce::Unfit(routed));
    }
    let plan::Routed { mut rows, mut out } = routed;
    plan::mark_claims(&mut rows, to.preclaim, &mut out);
    let events = events_json(stored)?;
    let deliveries = deliveries_json(&rows, to, now_ms)?;
    let notices = serde_json::to_string(&work_notices(
        to.instance_id,
        &work_elsewhere(&out, to.preclaim),
    ))
    .map_err(|e| StoreError::Corrupt(format!("work notices: {e}")))?;
    let n = stored.len() as i64;
    let values = vec![
        Value::from(seen_json(partners, to)?),
        Value::from(n),
        Value::from(n),
        Value::from(events),
        Value::from(now_ms),
        Value::from(now_ms),
        Value::from(deliveries),
        Value::from(WORK_CHANNEL),
        Value::from(notices),
    ];
    let row = db
        .query_one_raw(sql(DbBackend::Postgres, &STATEMENT, values))
        .await?;
    let fresh = row
        .as_ref()
        .and_then(|r| r.try_get::<bool>("", "fresh").ok());
    if fresh == Some(false) {
        return Ok(AtOnce::Stale);
    }
    let end = row.and_then(|r| r.try_get::<Option<i64>>("", "feed_end").ok().flatten());
    if end.is_none() {
        return Err(StoreError::Corrupt(
            "the feed_counter row is missing".into(),
        ));
    }
    out.claimed = plan::claimed(rows, published, to.preclaim, now_ms);
    Ok(AtOnce::Published(out))
}

/// What [`publish`] did with a batch.
pub enum AtOnce<'a> {
    /// Published in the one statement.
    Published(Publication),
    /// Left for a transaction, routed already.
    Unfit(plan::Routed<'a>),
    /// Nothing written: a partner's endpoints changed since they were read.
    Stale,
}

/// `g.fresh` holds when every partner's endpoints are as they were read;
/// all else writes only then.
static STATEMENT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH g AS (SELECT COALESCE(bool_and({VERSIONS_NOW} = x.fingerprint), false) AS fresh \
         FROM json_to_recordset(?::json) AS x(partner_id text, fingerprint text)), {WRITES}"
    )
});

const WRITES: &str = "c AS (UPDATE feed_counter SET value = value + ? WHERE id = 1 \
     AND (SELECT fresh FROM g) RETURNING value), \
     e AS (INSERT INTO outbox_event (event_id, partner_id, \"type\", subject_type, subject_id, \
     subject_version, occurred_at, schema_version, payload, correlation_id, created_at, \
     published_at, feed_seq, renditions, traceparent, tracestate) \
     SELECT v.event_id, v.partner_id, v.kind, v.subject_type, v.subject_id, v.subject_version, \
     v.occurred_at, v.schema_version, v.payload, v.correlation_id, v.created_at, v.created_at, \
     c.value - ? + v.n, v.renditions, v.traceparent, v.tracestate \
     FROM json_to_recordset(?::json) AS v(event_id text, partner_id text, kind text, \
     subject_type text, subject_id text, subject_version bigint, occurred_at bigint, \
     schema_version text, payload text, correlation_id text, created_at bigint, n bigint, \
     renditions text, traceparent text, tracestate text), c), \
     d AS (INSERT INTO delivery (id, event_id, endpoint_id, state, attempt_count, \
     next_attempt_at, created_at, updated_at, claim_seq, schema_version, reason) \
     SELECT r.id, r.event_id, r.endpoint_id, r.state, 0, r.due, ?, ?, r.claim_seq, \
     r.schema_version, r.reason \
     FROM json_to_recordset(?::json) AS r(id text, event_id text, endpoint_id text, \
     state text, due bigint, claim_seq bigint, schema_version int, reason text) \
     WHERE (SELECT fresh FROM g) \
     ON CONFLICT (event_id, endpoint_id) DO NOTHING), \
     w AS (SELECT pg_notify(?, x) FROM json_array_elements_text(?::json) AS x \
     WHERE (SELECT fresh FROM g)) \
     SELECT (SELECT value FROM c) AS feed_end, (SELECT fresh FROM g) AS fresh, \
     (SELECT count(*) FROM w) AS notices";

/// Each of `partners` with the fingerprint of its endpoints in `to`.
fn seen_json(partners: &[&str], to: &To<'_>) -> Result<String, StoreError> {
    let rows: Vec<SeenRow<'_>> = partners
        .iter()
        .map(|p| SeenRow {
            partner_id: p,
            fingerprint: to
                .subscribers
                .get(*p)
                .map_or_else(String::new, |s| fingerprint(s)),
        })
        .collect();
    serde_json::to_string(&rows).map_err(|e| StoreError::Corrupt(format!("partners: {e}")))
}

fn events_json(stored: &[(&NewEvent, i64)]) -> Result<String, StoreError> {
    let rows: Vec<EventRow<'_>> = stored
        .iter()
        .zip(1..)
        .map(|((e, created_at), n)| EventRow {
            event_id: e.id.as_str(),
            partner_id: &e.partner_id,
            kind: &e.event_type,
            subject_type: e.subject.as_ref().map(|s| s.subject_type.as_str()),
            subject_id: e.subject.as_ref().map(|s| s.id.as_str()),
            subject_version: e.subject.as_ref().and_then(|s| s.version),
            occurred_at: e.occurred_at_ms,
            schema_version: e.schema_version.to_string(),
            payload: &e.payload,
            correlation_id: e.correlation_id.as_deref(),
            created_at: *created_at,
            n,
            renditions: crate::domain::renditions::to_text(&e.renditions),
            traceparent: e.trace.as_ref().map(|t| t.traceparent().to_string()),
            tracestate: e.trace.as_ref().and_then(|t| t.tracestate()),
        })
        .collect();
    serde_json::to_string(&rows).map_err(|e| StoreError::Corrupt(format!("events: {e}")))
}

fn deliveries_json(rows: &[Row<'_>], to: &To<'_>, now_ms: i64) -> Result<String, StoreError> {
    let rows: Vec<DeliveryRow<'_>> = rows
        .iter()
        .map(|r| {
            let initial = plan::initial(r, to.preclaim, now_ms, None);
            DeliveryRow {
                id: &r.id,
                event_id: r.event_id,
                endpoint_id: r.endpoint_id,
                state: initial.state,
                due: initial.due,
                claim_seq: initial.claim_seq,
                schema_version: initial.schema_version,
                reason: initial.reason,
            }
        })
        .collect();
    serde_json::to_string(&rows).map_err(|e| StoreError::Corrupt(format!("deliveries: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalog::render::Rendering, domain::ordering::Place};

    fn row(ordering_key: Option<&str>) -> Row<'static> {
        Row {
            id: "dlv_1".into(),
            event: 0,
            event_id: "evt_1",
            endpoint_id: "ep_1",
            ordering_key: ordering_key.map(str::to_string),
            claimed: false,
            place: Place::Head,
            rendering: Rendering::AsSent,
        }
    }

    #[test]
    fn unordered_deliveries_of_events_that_need_no_projection_go_in_one_statement_on_postgres() {
        let out = Publication::default();
        assert!(fits(DbBackend::Postgres, &[row(None), row(None)], &out));
        assert!(
            !fits(DbBackend::Sqlite, &[row(None)], &out),
            "SQLite has no DML in a CTE"
        );
    }

    #[test]
    fn ordered_deliveries_and_projections_take_the_transaction() {
        let out = Publication::default();
        assert!(!fits(
            DbBackend::Postgres,
            &[row(None), row(Some("customer:1"))],
            &out
        ));
        let mut projected = Publication::default();
        projected
            .projected
            .insert("evt_1".into(), Default::default());
        assert!(!fits(DbBackend::Postgres, &[row(None)], &projected));
    }
}
