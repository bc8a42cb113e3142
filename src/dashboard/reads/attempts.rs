//! Attempts for the dashboard: an endpoint's or a delivery's in keyset
//! pages, and how long the attempts an endpoint sent lately took, measured
//! from the attempts themselves (the endpoint actor's moving average starts
//! from the request timeout and is for its own pacing, not for reading).

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, EntityTrait, Value};

use crate::{
    dashboard::paging::{Cursor, Keyset, Order, keyset, keyset_page},
    store::{StoreError, entity::attempt, query_in_chunks, search::Search},
};

/// Whose attempts.
#[derive(Debug, Clone, Copy)]
pub enum Of<'a> {
    Endpoint(&'a str),
    Delivery(&'a str),
}

/// A page of `size` attempts of `of` from `cursor`, in `order` of
/// `(started_at, id)`.
pub async fn page(
    db: &impl ConnectionTrait,
    of: Of<'_>,
    order: Order,
    cursor: &Cursor,
    size: u32,
) -> Result<Keyset<attempt::Model>, StoreError> {
    let search = match of {
        Of::Endpoint(id) => Search::new(
            "SELECT a.* FROM attempt a JOIN delivery d ON d.id = a.delivery_id WHERE d.endpoint_id = ?",
            vec![id.into()],
        ),
        Of::Delivery(id) => Search::new(
            "SELECT a.* FROM attempt a WHERE a.delivery_id = ?",
            vec![id.into()],
        ),
    };
    let stmt = keyset(search, ("a.started_at", "a.id"), order, cursor, size)
        .statement(db.get_database_backend());
    let rows = attempt::Entity::find().from_raw_sql(stmt).all(db).await?;
    Ok(keyset_page(order, cursor, size, rows, |a| {
        (a.started_at, &a.id)
    }))
}

/// How long an endpoint's sent attempts took over a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// The mean duration, in milliseconds.
    pub mean_ms: f64,
    /// How many attempts it is the mean of.
    pub attempts: i64,
}

/// The mean duration of the attempts each of `endpoints` sent since
/// `since_ms`, from request to answer or failure. Attempts never sent (an
/// address refused, a name that did not resolve) took no time and are left
/// out. An endpoint without such attempts has no entry.
pub async fn measured(
    db: &impl ConnectionTrait,
    endpoints: &[String],
    since_ms: i64,
) -> Result<HashMap<String, Measured>, StoreError> {
    let rows = query_in_chunks(
        db,
        "SELECT d.endpoint_id, SUM(a.latency_ms) AS total, COUNT(*) AS n \
         FROM attempt a JOIN delivery d ON d.id = a.delivery_id \
         WHERE a.started_at >= ? AND a.latency_ms IS NOT NULL AND a.remote_addr IS NOT NULL \
         AND d.endpoint_id IN ({ids}) GROUP BY d.endpoint_id",
        &[Value::from(since_ms)],
        endpoints,
        &[],
        |r| {
            let total: i64 = r.try_get("", "total")?;
            let n: i64 = r.try_get("", "n")?;
            Ok((r.try_get::<String>("", "endpoint_id")?, total, n))
        },
    )
    .await?;
    Ok(rows
        .into_iter()
        .filter(|(_, _, n)| *n > 0)
        .map(|(id, total, n)| {
            let mean_ms = total as f64 / n as f64;
            (
                id,
                Measured {
                    mean_ms,
                    attempts: n,
                },
            )
        })
        .collect())
}
