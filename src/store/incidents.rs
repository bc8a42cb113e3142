//! Incident rows: opened at most once per partner and cause while one is
//! open (the `incident_open` partial unique index decides between
//! instances), resolved once, each change announced to the partner in the
//! same transaction as an event of its own (`hookd.incident.opened`,
//! `hookd.incident.resolved`), which the fanout sends through the notice
//! channels. Every read of one partner's incidents starts from its id.

use sea_orm::{ConnectionTrait, DatabaseConnection, TransactionTrait, Value};

use super::{StoreError, query_all, sql};
use crate::domain::{
    event::{NewEvent, Subject},
    ids::{EventId, new_id},
    incident::{Cause, Incident, OpenedBy},
};

const COLUMNS: &str = "id, partner_id, cause, message, started_at, resolved_at, delayed_events, opened_by, created_at";

fn row(r: &sea_orm::QueryResult) -> Result<Incident, sea_orm::DbErr> {
    Ok(Incident {
        id: r.try_get("", "id")?,
        partner_id: r.try_get("", "partner_id")?,
        cause: r.try_get("", "cause")?,
        message: r.try_get("", "message")?,
        started_at: r.try_get("", "started_at")?,
        resolved_at: r.try_get("", "resolved_at")?,
        delayed_events: r.try_get("", "delayed_events")?,
        opened_by: r.try_get("", "opened_by")?,
        opened_at: r.try_get("", "created_at")?,
    })
}

/// The partner's event that announces the incident as it now stands.
pub fn notice(incident: &Incident, now_ms: i64) -> NewEvent {
    let (event_type, data) = incident.notice();
    NewEvent {
        id: EventId::generate(),
        event_type: event_type.into(),
        partner_id: incident.partner_id.clone(),
        subject: Some(Subject {
            subject_type: "incident".into(),
            id: incident.id.clone(),
            version: None,
        }),
        occurred_at_ms: now_ms,
        occurred_at_given: true,
        schema_version: 1,
        payload: data.to_string(),
        correlation_id: None,
        renditions: Default::default(),
        trace: None,
    }
}

/// What opening an incident needs.
#[derive(Debug, Clone)]
pub struct Opening<'a> {
    pub partner_id: &'a str,
    pub cause: Cause,
    pub message: &'a str,
    pub started_at: i64,
    pub opened_by: OpenedBy,
}

/// In the caller's transaction: opens the incident and queues its notice,
/// unless one of this partner and cause is open already (`None`). The
/// detector's openings are also refused when one of this partner and
/// cause was resolved after the new one would start: what it saw was
/// read before that resolution, and the incident that ended covered it.
/// The check and the insert are one statement, so two instances that
/// sweep at once cannot resolve and reopen the same backlog.
pub async fn open(
    txn: &impl ConnectionTrait,
    o: &Opening<'_>,
    now_ms: i64,
) -> Result<Option<Incident>, StoreError> {
    let ended_after = match o.opened_by {
        OpenedBy::Detector => o.started_at,
        OpenedBy::Operator => i64::MAX,
    };
    let rows = query_all(
        txn,
        sql(
            txn.get_database_backend(),
            &format!(
                "INSERT INTO incident ({COLUMNS}) SELECT ?, ?, ?, ?, ?, NULL, NULL, ?, ? \
                 WHERE NOT EXISTS (SELECT 1 FROM incident \
                   WHERE partner_id = ? AND cause = ? AND resolved_at > ?) \
                 ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
            ),
            vec![
                new_id("inc").into(),
                o.partner_id.into(),
                o.cause.as_str().into(),
                o.message.into(),
                o.started_at.into(),
                o.opened_by.as_str().into(),
                now_ms.into(),
                o.partner_id.into(),
                o.cause.as_str().into(),
                ended_after.into(),
            ],
        ),
        row,
    )
    .await?;
    let Some(opened) = rows.into_iter().next() else {
        return Ok(None);
    };
    super::outbox::insert(txn, &[notice(&opened, now_ms)], now_ms).await?;
    Ok(Some(opened))
}

/// In the caller's transaction: resolves the incident at `resolved_at` with
/// its count of delayed events and queues its notice, unless it is resolved
/// already (`None`).
pub async fn resolve(
    txn: &impl ConnectionTrait,
    id: &str,
    resolved_at: i64,
    now_ms: i64,
) -> Result<Option<Incident>, StoreError> {
    let backend = txn.get_database_backend();
    // The write first: on SQLite a transaction that read before it writes
    // cannot take the write lock while another writer committed meanwhile.
    let rows = query_all(
        txn,
        sql(
            backend,
            &format!(
                "UPDATE incident SET resolved_at = ? WHERE id = ? AND resolved_at IS NULL \
                 RETURNING {COLUMNS}"
            ),
            vec![resolved_at.into(), id.into()],
        ),
        row,
    )
    .await?;
    let Some(mut resolved) = rows.into_iter().next() else {
        return Ok(None);
    };
    let delayed = super::incident_watch::delayed_events(
        txn,
        &resolved.partner_id,
        resolved.started_at,
        resolved_at,
    )
    .await?;
    txn.execute_raw(sql(
        backend,
        "UPDATE incident SET delayed_events = ? WHERE id = ?",
        vec![delayed.into(), id.into()],
    ))
    .await?;
    resolved.delayed_events = Some(delayed);
    super::outbox::insert(txn, &[notice(&resolved, now_ms)], now_ms).await?;
    Ok(Some(resolved))
}

/// Opens an incident in a transaction of its own (an operator's).
pub async fn open_now(
    db: &DatabaseConnection,
    o: &Opening<'_>,
    now_ms: i64,
) -> Result<Option<Incident>, StoreError> {
    let txn = db.begin().await?;
    let opened = open(&txn, o, now_ms).await?;
    txn.commit().await?;
    Ok(opened)
}

/// Resolves an incident in a transaction of its own (an operator's).
pub async fn resolve_now(
    db: &DatabaseConnection,
    id: &str,
    now_ms: i64,
) -> Result<Option<Incident>, StoreError> {
    let txn = db.begin().await?;
    let resolved = resolve(&txn, id, now_ms, now_ms).await?;
    txn.commit().await?;
    Ok(resolved)
}

/// One incident, whoever's.
pub async fn get(db: &impl ConnectionTrait, id: &str) -> Result<Option<Incident>, StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            &format!("SELECT {COLUMNS} FROM incident WHERE id = ?"),
            vec![id.into()],
        ),
        row,
    )
    .await?;
    Ok(rows.into_iter().next())
}

/// The open incidents of `cause`, every partner's.
pub async fn open_of(db: &impl ConnectionTrait, cause: Cause) -> Result<Vec<Incident>, StoreError> {
    Ok(query_all(
        db,
        sql(
            db.get_database_backend(),
            &format!(
                "SELECT {COLUMNS} FROM incident WHERE cause = ? AND resolved_at IS NULL ORDER BY id"
            ),
            vec![cause.as_str().into()],
        ),
        row,
    )
    .await?)
}

/// When each partner's last incident of `cause` was resolved, for the
/// partners that have one.
pub async fn last_resolved(
    db: &impl ConnectionTrait,
    cause: Cause,
) -> Result<std::collections::HashMap<String, i64>, StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT partner_id, MAX(resolved_at) AS ended FROM incident \
             WHERE cause = ? AND resolved_at IS NOT NULL GROUP BY partner_id",
            vec![cause.as_str().into()],
        ),
        |r| Ok((r.try_get("", "partner_id")?, r.try_get("", "ended")?)),
    )
    .await?;
    Ok(rows.into_iter().collect())
}

/// One partner's incidents (`Some`), or every partner's: open ones first,
/// then the latest; at most `limit`.
pub async fn list(
    db: &impl ConnectionTrait,
    partner_id: Option<&str>,
    open_only: bool,
    limit: u32,
) -> Result<Vec<Incident>, StoreError> {
    let mut text = format!("SELECT {COLUMNS} FROM incident WHERE 1 = 1");
    let mut values: Vec<Value> = Vec::new();
    if let Some(p) = partner_id {
        text.push_str(" AND partner_id = ?");
        values.push(p.into());
    }
    if open_only {
        text.push_str(" AND resolved_at IS NULL");
    }
    text.push_str(
        " ORDER BY CASE WHEN resolved_at IS NULL THEN 0 ELSE 1 END, started_at DESC, id DESC LIMIT ?",
    );
    values.push(i64::from(limit).into());
    Ok(query_all(db, sql(db.get_database_backend(), &text, values), row).await?)
}
