//! Attempts across deliveries, newest first: every partner's, narrowed by
//! partner, endpoint, time and outcome, in keyset pages over
//! `(started_at, id)`. What `hookd delivery attempts` lists.

use sea_orm::{ConnectionTrait, FromQueryResult};

use super::{StoreError, entity::attempt, query_all, search::Search};
use crate::store::scoped::Position;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx: no error category.
    Succeeded,
    /// Any error category.
    Failed,
}

/// Which attempts; every field narrows the list.
#[derive(Debug, Default, Clone)]
pub struct AttemptSearch {
    pub partner_id: Option<String>,
    pub endpoint_id: Option<String>,
    pub delivery_id: Option<String>,
    /// Started at or after (Unix ms).
    pub since: Option<i64>,
    /// Started before (Unix ms).
    pub until: Option<i64>,
    pub outcome: Option<Outcome>,
    /// Only failures of this category (`timeout`, `http_status`, …).
    pub category: Option<String>,
}

/// An attempt with whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRow {
    pub partner_id: String,
    pub endpoint_id: String,
    pub attempt: attempt::Model,
}

/// At most `limit` attempts that pass `f`, newest first, after `before`.
pub async fn attempts(
    db: &impl ConnectionTrait,
    f: &AttemptSearch,
    before: Option<&Position>,
    limit: u32,
) -> Result<Vec<AttemptRow>, StoreError> {
    let mut search = Search::new(
        "SELECT a.*, d.endpoint_id AS of_endpoint, e.partner_id AS of_partner FROM attempt a \
         JOIN delivery d ON d.id = a.delivery_id JOIN endpoint e ON e.id = d.endpoint_id \
         WHERE 1 = 1",
        vec![],
    );
    search
        .and_some("e.partner_id = ?", f.partner_id.clone())
        .and_some("d.endpoint_id = ?", f.endpoint_id.clone())
        .and_some("a.delivery_id = ?", f.delivery_id.clone())
        .and_some("a.started_at >= ?", f.since)
        .and_some("a.started_at < ?", f.until)
        .and_if(
            f.outcome == Some(Outcome::Succeeded),
            "a.error_category IS NULL",
        )
        .and_if(
            f.outcome == Some(Outcome::Failed),
            "a.error_category IS NOT NULL",
        )
        .and_some("a.error_category = ?", f.category.clone());
    let stmt = search
        .newest_first("a.started_at", "a.id", before, limit)
        .statement(db.get_database_backend());
    Ok(query_all(db, stmt, |r| {
        Ok(AttemptRow {
            partner_id: r.try_get("", "of_partner")?,
            endpoint_id: r.try_get("", "of_endpoint")?,
            attempt: attempt::Model::from_query_result(r, "")?,
        })
    })
    .await?)
}
