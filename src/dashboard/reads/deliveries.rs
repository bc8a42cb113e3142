//! The delivery search across partners, in keyset pages both ways: newest
//! first, each row with the partner it belongs to.

use sea_orm::ConnectionTrait;

use crate::{
    dashboard::paging::{Cursor, Keyset, Order, keyset, keyset_page},
    store::{StoreError, admin::DeliverySearch, query_all, scoped::DeliveryRow, search::Search},
};

const FOUND: &str = "SELECT d.id, d.event_id, o.type AS event_type, d.endpoint_id, d.state, \
     d.attempt_count, d.next_attempt_at, d.last_status, d.last_latency_ms, d.last_error_category, \
     d.reason, d.created_at, d.updated_at, e.partner_id \
     FROM delivery d JOIN endpoint e ON e.id = d.endpoint_id \
     JOIN outbox_event o ON o.event_id = d.event_id WHERE 1 = 1";

fn found(r: &sea_orm::QueryResult) -> Result<(String, DeliveryRow), sea_orm::DbErr> {
    let row = DeliveryRow {
        id: r.try_get("", "id")?,
        event_id: r.try_get("", "event_id")?,
        event_type: r.try_get("", "event_type")?,
        endpoint_id: r.try_get("", "endpoint_id")?,
        state: r.try_get("", "state")?,
        attempt_count: r.try_get("", "attempt_count")?,
        next_attempt_at: r.try_get("", "next_attempt_at")?,
        last_status: r.try_get("", "last_status")?,
        last_latency_ms: r.try_get("", "last_latency_ms")?,
        last_error_category: r.try_get("", "last_error_category")?,
        reason: r.try_get("", "reason")?,
        created_at: r.try_get("", "created_at")?,
        updated_at: r.try_get("", "updated_at")?,
    };
    Ok((r.try_get("", "partner_id")?, row))
}

/// A page of `size` deliveries that match `s`, newest first, from `cursor`:
/// (partner id, delivery).
pub async fn page(
    db: &impl ConnectionTrait,
    s: &DeliverySearch,
    cursor: &Cursor,
    size: u32,
) -> Result<Keyset<(String, DeliveryRow)>, StoreError> {
    let mut search = Search::new(FOUND, vec![]);
    search
        .deliveries(&s.filter)
        .and_some("e.partner_id = ?", s.partner_id.clone())
        .and_some("d.last_status = ?", s.status_code)
        .and_some("d.last_error_category = ?", s.category.clone());
    let order = Order::NewestFirst;
    let stmt = keyset(search, ("d.created_at", "d.id"), order, cursor, size)
        .statement(db.get_database_backend());
    let rows = query_all(db, stmt, found).await?;
    Ok(keyset_page(order, cursor, size, rows, |(_, d)| {
        (d.created_at, &d.id)
    }))
}
