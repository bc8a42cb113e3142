//! What operators read across partners: deliveries, events and endpoints,
//! found by id or by search, each with the partner it belongs to. Acting on
//! one goes through its owner's [`scoped`](super::scoped) view, exactly as
//! the partner would.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, EntityTrait, Value};

use super::{
    StoreError,
    endpoints::{Endpoint, EndpointStatus},
    entity::{endpoint, outbox_event},
    query_all, query_in_chunks,
    scoped::{DELIVERY_COLUMNS, DeliveryFilter, DeliveryRow, Position, delivery_row},
    search::Search,
    sql,
};
use crate::domain::event::NewEvent;

/// The operator's delivery search: the partner API's filters and more.
#[derive(Debug, Default, Clone)]
pub struct DeliverySearch {
    pub filter: DeliveryFilter,
    pub partner_id: Option<String>,
    /// The last attempt's HTTP status.
    pub status_code: Option<i32>,
    /// The last attempt's error category.
    pub category: Option<String>,
}

/// Deliveries of every partner, newest first, before `before`: (partner id, delivery).
pub async fn deliveries(
    db: &impl ConnectionTrait,
    s: &DeliverySearch,
    before: Option<&Position>,
    limit: u32,
) -> Result<Vec<(String, DeliveryRow)>, StoreError> {
    let mut search = Search::new(
        format!(
            "SELECT {DELIVERY_COLUMNS}, e.partner_id FROM delivery d JOIN endpoint e ON e.id = d.endpoint_id \
             JOIN outbox_event o ON o.event_id = d.event_id WHERE 1 = 1"
        ),
        vec![],
    );
    search
        .deliveries(&s.filter)
        .and_some("e.partner_id = ?", s.partner_id.clone())
        .and_some("d.last_status = ?", s.status_code)
        .and_some("d.last_error_category = ?", s.category.clone());
    let stmt = search
        .newest_first("d.created_at", "d.id", before, limit)
        .statement(db.get_database_backend());
    Ok(query_all(db, stmt, |r| {
        Ok((r.try_get("", "partner_id")?, delivery_row(r)?))
    })
    .await?)
}

/// The partner one row belongs to, by `text` with one `?` for the id.
async fn owner(
    db: &impl ConnectionTrait,
    text: &str,
    id: &str,
) -> Result<Option<String>, StoreError> {
    let stmt = sql(db.get_database_backend(), text, vec![id.into()]);
    let rows = query_all(db, stmt, |r| r.try_get::<String>("", "partner_id")).await?;
    Ok(rows.into_iter().next())
}

/// The partner whose endpoint got this delivery.
pub async fn delivery_owner(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<String>, StoreError> {
    owner(
        db,
        "SELECT e.partner_id FROM delivery d JOIN endpoint e ON e.id = d.endpoint_id WHERE d.id = ?",
        id,
    )
    .await
}

/// The partner an event was produced for.
pub async fn event_owner(
    db: &impl ConnectionTrait,
    id: &str,
) -> Result<Option<String>, StoreError> {
    owner(
        db,
        "SELECT partner_id FROM outbox_event WHERE event_id = ?",
        id,
    )
    .await
}

/// The operator's event search; every field narrows it.
#[derive(Debug, Default, Clone)]
pub struct EventSearch {
    pub partner_id: Option<String>,
    pub event_type: Option<String>,
    /// Received at or after (Unix ms).
    pub since: Option<i64>,
    /// Received before (Unix ms).
    pub until: Option<i64>,
}

/// A published event with when hookd received and published it.
#[derive(Debug, Clone)]
pub struct PublishedEvent {
    pub event: NewEvent,
    pub created_at: i64,
    pub published_at: Option<i64>,
}

/// Published (not rejected) events of every partner, newest first by
/// reception, before `before`.
pub async fn events(
    db: &impl ConnectionTrait,
    s: &EventSearch,
    before: Option<&Position>,
    limit: u32,
) -> Result<Vec<PublishedEvent>, StoreError> {
    let mut search = Search::new(
        "SELECT * FROM outbox_event WHERE published_at IS NOT NULL AND rejected_reason IS NULL",
        vec![],
    );
    search
        .and_some("partner_id = ?", s.partner_id.clone())
        .and_some("type = ?", s.event_type.clone())
        .and_some("created_at >= ?", s.since)
        .and_some("created_at < ?", s.until);
    let stmt = search
        .newest_first("created_at", "event_id", before, limit)
        .statement(db.get_database_backend());
    let rows = outbox_event::Entity::find()
        .from_raw_sql(stmt)
        .all(db)
        .await?;
    rows.into_iter()
        .map(|m| {
            let (created_at, published_at) = (m.created_at, m.published_at);
            super::outbox::from_row(m).map(|event| PublishedEvent {
                event,
                created_at,
                published_at,
            })
        })
        .collect()
}

/// The operator's endpoint search; every field narrows it.
#[derive(Debug, Default, Clone)]
pub struct EndpointSearch {
    pub partner_id: Option<String>,
    pub status: Option<EndpointStatus>,
    /// `true`: failing now (a `failing_since`); `false`: not failing.
    pub failing: Option<bool>,
}

/// Endpoints of every partner (hookd's own notification endpoints too),
/// oldest first, after `after`.
pub async fn endpoints(
    db: &impl ConnectionTrait,
    s: &EndpointSearch,
    after: Option<&Position>,
    limit: u32,
) -> Result<Vec<Endpoint>, StoreError> {
    let mut search = Search::new("SELECT * FROM endpoint WHERE 1 = 1", vec![]);
    search
        .and_some("partner_id = ?", s.partner_id.clone())
        .and_some("status = ?", s.status.map(EndpointStatus::as_str))
        .and_if(s.failing == Some(true), "failing_since IS NOT NULL")
        .and_if(s.failing == Some(false), "failing_since IS NULL");
    let stmt = search
        .oldest_first("created_at", "id", after, limit)
        .statement(db.get_database_backend());
    endpoint::Entity::find()
        .from_raw_sql(stmt)
        .all(db)
        .await?
        .into_iter()
        .map(Endpoint::try_from)
        .collect()
}

/// Any partner's endpoint.
pub async fn endpoint(db: &impl ConnectionTrait, id: &str) -> Result<Option<Endpoint>, StoreError> {
    endpoint::Entity::find_by_id(id.to_string())
        .one(db)
        .await?
        .map(Endpoint::try_from)
        .transpose()
}

/// What an endpoint holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Backlog {
    /// Pending, failed (waiting to retry) or in flight.
    pub waiting: i64,
    /// Held while the endpoint is not active.
    pub paused: i64,
}

/// The backlog of each of these endpoints (absent: nothing held).
pub async fn backlogs(
    db: &impl ConnectionTrait,
    ids: &[String],
) -> Result<HashMap<String, Backlog>, StoreError> {
    let rows = query_in_chunks(
        db,
        "SELECT endpoint_id, SUM(CASE WHEN state = 'paused' THEN 0 ELSE 1 END) AS waiting, \
         SUM(CASE WHEN state = 'paused' THEN 1 ELSE 0 END) AS paused FROM delivery \
         WHERE endpoint_id IN ({ids}) AND state IN ('waiting', 'pending', 'failed', 'delivering', 'paused') \
         GROUP BY endpoint_id",
        &[],
        ids,
        &[] as &[Value],
        |r| {
            Ok((
                r.try_get::<String>("", "endpoint_id")?,
                Backlog {
                    waiting: r.try_get::<Option<i64>>("", "waiting")?.unwrap_or(0),
                    paused: r.try_get::<Option<i64>>("", "paused")?.unwrap_or(0),
                },
            ))
        },
    )
    .await?;
    Ok(rows.into_iter().collect())
}
