//! The numbers on the summary cards: endpoints by status, deliveries
//! waiting and stuck, and events not yet fanned out, for one partner when
//! the page is filtered to it, or for all.

use sea_orm::{ConnectionTrait, Value};

use crate::store::{
    StoreError,
    backlog::{Stuck, Waiting},
    query_all, sql,
};

/// What the cards count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// Endpoints by status: active, failing, paused, disabled.
    pub endpoints: [(&'static str, i64); 4],
    pub waiting: Waiting,
    pub stuck: Stuck,
    /// Committed events not yet fanned out.
    pub unpublished: i64,
    /// When the oldest of them was received (Unix ms).
    pub oldest_unpublished: Option<i64>,
}

/// `text` with ` AND <clause>` added for a partner, whose `?` takes it.
fn scoped(text: &str, clause: &str, partner: Option<&str>) -> (String, Vec<Value>) {
    match partner {
        Some(p) => (format!("{text} AND {clause}"), vec![p.into()]),
        None => (text.to_string(), vec![]),
    }
}

/// Deliveries of the partner's endpoints (`d` is the delivery).
const OF_PARTNER: &str = "d.endpoint_id IN (SELECT id FROM endpoint WHERE partner_id = ?)";

async fn endpoints(
    db: &impl ConnectionTrait,
    partner: Option<&str>,
) -> Result<[(&'static str, i64); 4], StoreError> {
    let (text, values) = scoped(
        "SELECT CASE WHEN status = 'active' AND failing_since IS NOT NULL THEN 'failing' ELSE status END AS s, \
         COUNT(*) AS n FROM endpoint WHERE 1 = 1",
        "partner_id = ?",
        partner,
    );
    let stmt = sql(
        db.get_database_backend(),
        &format!("{text} GROUP BY 1"),
        values,
    );
    let rows: Vec<(String, i64)> =
        query_all(db, stmt, |r| Ok((r.try_get("", "s")?, r.try_get("", "n")?))).await?;
    let mut out = [
        ("active", 0),
        ("failing", 0),
        ("paused", 0),
        ("disabled", 0),
    ];
    for (status, n) in rows {
        if let Some(slot) = out.iter_mut().find(|(s, _)| *s == status) {
            slot.1 = n;
        }
    }
    Ok(out)
}

/// Deliveries by state, over the states the cards show.
async fn deliveries(
    db: &impl ConnectionTrait,
    partner: Option<&str>,
    last_two: i64,
) -> Result<(Waiting, Stuck), StoreError> {
    let (text, mut values) = scoped(
        "SELECT d.state, COUNT(*) AS n, \
         SUM(CASE WHEN d.state IN ('pending', 'failed') AND d.scheduled_attempts >= ? THEN 1 ELSE 0 END) AS saturated \
         FROM delivery d WHERE d.state IN ('pending', 'failed', 'delivering', 'paused', 'dead')",
        OF_PARTNER,
        partner,
    );
    values.insert(0, last_two.into());
    let stmt = sql(
        db.get_database_backend(),
        &format!("{text} GROUP BY d.state"),
        values,
    );
    let rows: Vec<(String, i64, i64)> = query_all(db, stmt, |r| {
        let saturated = r.try_get::<Option<i64>>("", "saturated")?;
        Ok((
            r.try_get("", "state")?,
            r.try_get("", "n")?,
            saturated.unwrap_or(0),
        ))
    })
    .await?;
    let (mut w, mut s) = (Waiting::default(), Stuck::default());
    for (state, n, saturated) in rows {
        s.saturated += saturated;
        match state.as_str() {
            "pending" => w.pending = n,
            "failed" => w.failed = n,
            "delivering" => w.delivering = n,
            "paused" => s.paused = n,
            _ => s.dead = n,
        }
    }
    Ok((w, s))
}

async fn unpublished(
    db: &impl ConnectionTrait,
    partner: Option<&str>,
) -> Result<(i64, Option<i64>), StoreError> {
    let (text, values) = scoped(
        "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox_event WHERE published_at IS NULL",
        "partner_id = ?",
        partner,
    );
    let stmt = sql(db.get_database_backend(), &text, values);
    let rows = query_all(db, stmt, |r| {
        Ok((r.try_get("", "n")?, r.try_get("", "oldest")?))
    })
    .await?;
    Ok(rows.into_iter().next().unwrap_or((0, None)))
}

/// The cards' numbers, of `partner`'s endpoints only when given.
/// `attempts`: the length of the retry schedule (a delivery on one of its
/// last two attempts counts as saturated).
pub async fn totals(
    db: &impl ConnectionTrait,
    partner: Option<&str>,
    attempts: usize,
) -> Result<Totals, StoreError> {
    let last_two = i64::try_from(attempts.saturating_sub(2)).unwrap_or(i64::MAX);
    let (waiting, stuck) = deliveries(db, partner, last_two).await?;
    let (unpublished, oldest_unpublished) = unpublished(db, partner).await?;
    Ok(Totals {
        endpoints: endpoints(db, partner).await?,
        waiting,
        stuck,
        unpublished,
        oldest_unpublished,
    })
}
