//! What the dashboard shows of endpoints across partners: each endpoint's
//! standing (status, failing since, warned, circuit as stored, owner and
//! backlog), filtered and sorted; an endpoint's recent attempts and its
//! last failure; and the notices (`endpoint.*` events) announced about it.

use sea_orm::{ConnectionTrait, EntityTrait, FromQueryResult};

use super::{StoreError, endpoints::circuit_of, entity::attempt, query_all, search::Search, sql};
use crate::domain::circuit::Saved;

/// An endpoint as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub id: String,
    pub partner_id: String,
    pub url: String,
    pub description: String,
    /// `endpoint`, `notification` or `operator`.
    pub kind: String,
    /// `active`, `paused` or `disabled`.
    pub status: String,
    pub disabled_reason: Option<String>,
    pub failing_since: Option<i64>,
    /// When `endpoint.failing` was announced.
    pub warned_at: Option<i64>,
    /// The circuit as its owner's actor last saved it on the row.
    pub circuit: Saved,
    /// The instance that holds the endpoint's lease.
    pub owner: Option<String>,
    /// Deliveries pending, failed (waiting to retry) or in flight.
    pub waiting: i64,
    /// Deliveries held while the endpoint is not active.
    pub paused: i64,
    pub created_at: i64,
}

/// Which endpoints, by status as operators speak of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    /// Active and succeeding.
    Active,
    /// Active with a `failing_since`.
    Failing,
    Paused,
    Disabled,
}

/// A choice of the list named in a query string, standing for some SQL:
/// each is one row of its type's [`Choice::TABLE`].
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// Each choice with its name and its SQL.
    const TABLE: &'static [(Self, &'static str, &'static str)];

    /// Every choice, in the order the page offers them.
    fn all() -> impl Iterator<Item = Self> {
        Self::TABLE.iter().map(|r| r.0)
    }

    fn as_str(self) -> &'static str {
        Self::TABLE.iter().find(|r| r.0 == self).map_or("", |r| r.1)
    }

    fn parse(name: &str) -> Option<Self> {
        Self::TABLE.iter().find(|r| r.1 == name).map(|r| r.0)
    }

    /// The condition (a filter) or the `ORDER BY` list (a sort) it stands for.
    fn sql(self) -> &'static str {
        Self::TABLE.iter().find(|r| r.0 == self).map_or("", |r| r.2)
    }
}

impl Choice for StatusFilter {
    const TABLE: &'static [(Self, &'static str, &'static str)] = &[
        (
            StatusFilter::Active,
            "active",
            "e.status = 'active' AND e.failing_since IS NULL",
        ),
        (
            StatusFilter::Failing,
            "failing",
            "e.status = 'active' AND e.failing_since IS NOT NULL",
        ),
        (StatusFilter::Paused, "paused", "e.status = 'paused'"),
        (StatusFilter::Disabled, "disabled", "e.status = 'disabled'"),
    ];
}

/// The order of the list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Sort {
    /// Failing longest first, then the rest.
    #[default]
    FailingSince,
    /// Most held (waiting and paused) first.
    Backlog,
    /// By partner, then oldest first.
    Partner,
}

impl Choice for Sort {
    const TABLE: &'static [(Self, &'static str, &'static str)] = &[
        (
            Sort::FailingSince,
            "failing_since",
            "CASE WHEN e.failing_since IS NULL THEN 1 ELSE 0 END, e.failing_since, e.created_at, e.id",
        ),
        (
            Sort::Backlog,
            "backlog",
            "COALESCE(b.waiting, 0) + COALESCE(b.paused, 0) DESC, e.created_at, e.id",
        ),
        (Sort::Partner, "partner", "e.partner_id, e.created_at, e.id"),
    ];
}

/// The list's filters; every one narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub partner_id: Option<String>,
    pub status: Option<StatusFilter>,
    /// Only endpoints whose stored circuit is not closed (open or half-open).
    pub open_circuit: bool,
    /// Only endpoints that hold deliveries (waiting or paused).
    pub with_backlog: bool,
}

const STANDING: &str = "SELECT e.id, e.partner_id, e.url, e.description, e.kind, e.status, e.disabled_reason, \
     e.failing_since, e.warned_at, e.circuit_failures, e.circuit_open_until, e.circuit_cooldown_ms, \
     e.lease_owner, e.created_at, COALESCE(b.waiting, 0) AS waiting, COALESCE(b.paused, 0) AS paused \
     FROM endpoint e LEFT JOIN (SELECT endpoint_id, \
       SUM(CASE WHEN state = 'paused' THEN 0 ELSE 1 END) AS waiting, \
       SUM(CASE WHEN state = 'paused' THEN 1 ELSE 0 END) AS paused \
       FROM delivery WHERE state IN ('waiting', 'pending', 'failed', 'delivering', 'paused') GROUP BY endpoint_id) b \
     ON b.endpoint_id = e.id WHERE 1 = 1";

fn standing(r: &sea_orm::QueryResult) -> Result<Standing, sea_orm::DbErr> {
    Ok(Standing {
        id: r.try_get("", "id")?,
        partner_id: r.try_get("", "partner_id")?,
        url: r.try_get("", "url")?,
        description: r.try_get("", "description")?,
        kind: r.try_get("", "kind")?,
        status: r.try_get("", "status")?,
        disabled_reason: r.try_get("", "disabled_reason")?,
        failing_since: r.try_get("", "failing_since")?,
        warned_at: r.try_get("", "warned_at")?,
        circuit: circuit_of(r)?,
        owner: r.try_get("", "lease_owner")?,
        waiting: r.try_get("", "waiting")?,
        paused: r.try_get("", "paused")?,
        created_at: r.try_get("", "created_at")?,
    })
}

/// Endpoints of every partner that pass `f`, in `sort` order; at most `limit`.
pub async fn list(
    db: &impl ConnectionTrait,
    f: &Filter,
    sort: Sort,
    limit: u32,
) -> Result<Vec<Standing>, StoreError> {
    let mut search = Search::new(STANDING, vec![]);
    search
        .and_some("e.partner_id = ?", f.partner_id.clone())
        .and_if(f.status.is_some(), f.status.map_or("", Choice::sql))
        .and_if(f.open_circuit, "e.circuit_open_until IS NOT NULL")
        .and_if(
            f.with_backlog,
            "COALESCE(b.waiting, 0) + COALESCE(b.paused, 0) > 0",
        );
    let stmt = search
        .ordered(sort.sql(), limit)
        .statement(db.get_database_backend());
    Ok(query_all(db, stmt, standing).await?)
}

/// One endpoint of any partner.
pub async fn one(db: &impl ConnectionTrait, id: &str) -> Result<Option<Standing>, StoreError> {
    let mut search = Search::new(STANDING, vec![]);
    search.and_some("e.id = ?", Some(id.to_string()));
    let stmt = search.statement(db.get_database_backend());
    Ok(query_all(db, stmt, standing).await?.into_iter().next())
}

/// The endpoint's latest attempts, newest first.
pub async fn recent_attempts(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    limit: u32,
) -> Result<Vec<attempt::Model>, StoreError> {
    let stmt = sql(
        db.get_database_backend(),
        "SELECT a.* FROM attempt a JOIN delivery d ON d.id = a.delivery_id WHERE d.endpoint_id = ? \
         ORDER BY a.started_at DESC, a.id DESC LIMIT ?",
        vec![endpoint_id.into(), i64::from(limit).into()],
    );
    Ok(attempt::Entity::find().from_raw_sql(stmt).all(db).await?)
}

/// The endpoint's latest failed attempt (one with an error category).
pub async fn last_failure(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
) -> Result<Option<attempt::Model>, StoreError> {
    let stmt = sql(
        db.get_database_backend(),
        "SELECT a.* FROM attempt a JOIN delivery d ON d.id = a.delivery_id WHERE d.endpoint_id = ? \
         AND a.error_category IS NOT NULL ORDER BY a.started_at DESC, a.id DESC LIMIT 1",
        vec![endpoint_id.into()],
    );
    Ok(attempt::Entity::find().from_raw_sql(stmt).one(db).await?)
}

/// A notice announced about an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, FromQueryResult)]
pub struct Notice {
    pub event_id: String,
    /// `endpoint.failing`, `endpoint.disabled` or `endpoint.recovered`.
    pub event_type: String,
    pub created_at: i64,
    pub published_at: Option<i64>,
}

/// The latest notices about the endpoint in its partner's events, newest first.
pub async fn notices(
    db: &impl ConnectionTrait,
    partner_id: &str,
    endpoint_id: &str,
    limit: u32,
) -> Result<Vec<Notice>, StoreError> {
    let stmt = sql(
        db.get_database_backend(),
        "SELECT event_id, type AS event_type, created_at, published_at FROM outbox_event \
         WHERE partner_id = ? AND subject_type = 'endpoint' AND subject_id = ? \
         AND type IN ('endpoint.failing', 'endpoint.disabled', 'endpoint.recovered') \
         ORDER BY created_at DESC, event_id DESC LIMIT ?",
        vec![
            partner_id.into(),
            endpoint_id.into(),
            i64::from(limit).into(),
        ],
    );
    Ok(Notice::find_by_statement(stmt).all(db).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_sorts_read_back_their_names() {
        assert_eq!(StatusFilter::all().count(), 4);
        for f in StatusFilter::all() {
            assert_eq!(StatusFilter::parse(f.as_str()), Some(f));
            assert!(f.sql().starts_with("e.status = "), "{f:?}");
        }
        assert_eq!(Sort::all().count(), 3);
        for s in Sort::all() {
            assert_eq!(Sort::parse(s.as_str()), Some(s));
            assert!(s.sql().ends_with("e.id"), "{s:?}: a total order");
        }
        assert_eq!(StatusFilter::parse("broken"), None);
        assert_eq!(Sort::parse("id; DROP TABLE endpoint"), None);
    }
}
