//! The outbox table: events as producers committed them, read back as domain events.

use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use super::{StoreError, entity::outbox_event};
use crate::domain::{
    event::{NewEvent, Subject},
    ids::EventId,
    trace::TraceContext,
};

const INSERT_CHUNK: usize = 500;

fn to_row(e: &NewEvent, now_ms: i64, published_at: Option<i64>) -> outbox_event::ActiveModel {
    numbered_row(e, now_ms, published_at, None)
}

fn numbered_row(
    e: &NewEvent,
    now_ms: i64,
    published_at: Option<i64>,
    feed_seq: Option<i64>,
) -> outbox_event::ActiveModel {
    outbox_event::ActiveModel {
        event_id: Set(e.id.as_str().to_string()),
        partner_id: Set(e.partner_id.clone()),
        r#type: Set(e.event_type.clone()),
        subject_type: Set(e.subject.as_ref().map(|s| s.subject_type.clone())),
        subject_id: Set(e.subject.as_ref().map(|s| s.id.clone())),
        subject_version: Set(e.subject.as_ref().and_then(|s| s.version)),
        occurred_at: Set(e.occurred_at_ms),
        schema_version: Set(e.schema_version.to_string()),
        payload: Set(e.payload.clone()),
        renditions: Set(crate::domain::renditions::to_text(&e.renditions)),
        rejected_reason: Set(None),
        correlation_id: Set(e.correlation_id.clone()),
        created_at: Set(now_ms),
        published_at: Set(published_at),
        feed_seq: Set(feed_seq),
        traceparent: Set(e.trace.as_ref().map(|t| t.traceparent().to_string())),
        tracestate: Set(e
            .trace
            .as_ref()
            .and_then(|t| t.tracestate().map(str::to_string))),
    }
}

/// A stored row as the domain event it was created from.
pub fn from_row(m: outbox_event::Model) -> Result<NewEvent, StoreError> {
    let id =
        EventId::parse(&m.event_id).map_err(|e| StoreError::Corrupt(format!("event_id {e}")))?;
    let subject = match (m.subject_type, m.subject_id) {
        (Some(subject_type), Some(id)) => Some(Subject {
            subject_type,
            id,
            version: m.subject_version,
        }),
        _ => None,
    };
    let schema_version = m.schema_version.parse::<u32>().map_err(|_| {
        StoreError::Corrupt(format!(
            "event {id} has schema_version `{}`, not a positive integer",
            m.schema_version
        ))
    })?;
    let renditions = crate::domain::renditions::from_text(m.renditions.as_deref())
        .map_err(|e| StoreError::Corrupt(format!("event {id}: {e}")))?;
    Ok(NewEvent {
        id,
        event_type: m.r#type,
        partner_id: m.partner_id,
        subject,
        occurred_at_ms: m.occurred_at,
        occurred_at_given: true,
        schema_version,
        payload: m.payload,
        correlation_id: m.correlation_id,
        renditions,
        // A context written by SQL that does not parse is no context.
        trace: m
            .traceparent
            .as_deref()
            .and_then(|t| TraceContext::parse(t, m.tracestate.as_deref())),
    })
}

/// Inserts events for the fanout to publish; inside the caller's
/// transaction when `db` is one.
pub async fn insert(
    db: &impl ConnectionTrait,
    events: &[NewEvent],
    now_ms: i64,
) -> Result<(), StoreError> {
    insert_rows(db, events, now_ms, None).await
}

/// Inserts events that the caller's transaction publishes itself (the fast
/// path), each with the time it was written, published then, at the feed
/// positions from `first_seq` on in this order (taken by the caller, see
/// `fanout::take_feed_positions`). They are never unpublished, so on
/// PostgreSQL their insert wakes no fanout (migration 8).
pub async fn insert_numbered(
    db: &impl ConnectionTrait,
    events: &[(&NewEvent, i64)],
    first_seq: i64,
) -> Result<(), StoreError> {
    let mut seq = first_seq;
    for chunk in events.chunks(INSERT_CHUNK) {
        let rows = chunk.iter().map(|(e, now_ms)| {
            seq += 1;
            numbered_row(e, *now_ms, Some(*now_ms), Some(seq - 1))
        });
        outbox_event::Entity::insert_many(rows.collect::<Vec<_>>())
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

async fn insert_rows(
    db: &impl ConnectionTrait,
    events: &[NewEvent],
    now_ms: i64,
    published_at: Option<i64>,
) -> Result<(), StoreError> {
    for chunk in events.chunks(INSERT_CHUNK) {
        outbox_event::Entity::insert_many(chunk.iter().map(|e| to_row(e, now_ms, published_at)))
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// The stored events among these ids.
pub async fn find(db: &impl ConnectionTrait, ids: &[&str]) -> Result<Vec<NewEvent>, StoreError> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(INSERT_CHUNK) {
        let rows = outbox_event::Entity::find()
            .filter(outbox_event::Column::EventId.is_in(chunk.iter().copied()))
            .all(db)
            .await?;
        for row in rows {
            out.push(from_row(row)?);
        }
    }
    Ok(out)
}

/// The events the fanout rejected, newest first, at most `limit`.
pub async fn rejected(
    db: &impl ConnectionTrait,
    limit: u64,
) -> Result<Vec<outbox_event::Model>, StoreError> {
    use sea_orm::{QueryOrder, QuerySelect};
    Ok(outbox_event::Entity::find()
        .filter(outbox_event::Column::RejectedReason.is_not_null())
        .order_by_desc(outbox_event::Column::PublishedAt)
        .limit(limit)
        .all(db)
        .await?)
}
