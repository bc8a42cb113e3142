//! The fanout's claim: unpublished events, written by any process, are each
//! checked against the catalog and either published (see `fanout::publish`)
//! or, when they fail it, rejected with the reason: never delivered, kept
//! for the operator to see (`GET /v1/admin/events?state=rejected`).

use sea_orm::ConnectionTrait;
use serde_json::Value;

use super::{
    StoreError,
    fanout::{Fanout, Preclaim, Published, PublishedEvent, publish},
    skip_locked, sql,
};
use crate::{
    catalog::{Catalog, Refusal},
    domain::{
        renditions::{self, Renditions},
        trace::TraceContext,
    },
};

/// An unpublished event as read for the fanout.
struct Unpublished {
    id: String,
    partner_id: String,
    event_type: String,
    subject_type: Option<String>,
    subject_id: Option<String>,
    schema_version: String,
    payload: String,
    renditions: Option<String>,
    created_at: i64,
    /// Read only when the claim is traced.
    trace: Option<TraceContext>,
}

/// An event that passed the catalog, with what publishing needs.
struct Checked {
    version: u32,
    renditions: Renditions,
}

/// Why an event fails the catalog, in words for the operator.
fn check(catalog: &Catalog, e: &Unpublished) -> Result<Checked, String> {
    let version = e
        .schema_version
        .parse::<u32>()
        .ok()
        .filter(|v| *v >= 1)
        .ok_or_else(|| {
            format!(
                "schema_version `{}` is not a positive integer",
                e.schema_version
            )
        })?;
    let renditions = renditions::from_text(e.renditions.as_deref())?;
    let texts = std::iter::once((version, e.payload.as_str()))
        .chain(renditions.iter().map(|(v, d)| (*v, d.as_str())));
    for (v, text) in texts {
        let data: Value = serde_json::from_str(text)
            .map_err(|err| format!("data at version {v} is not JSON: {err}"))?;
        catalog
            .check(&e.event_type, v, &data)
            .map_err(|refusal| match refusal {
                Refusal::UnknownType => format!(
                    "unknown-event-type: `{}` is not in the catalog",
                    e.event_type
                ),
                Refusal::UnknownVersion { latest } => {
                    format!(
                        "{} has no version {v}; the latest is {latest}",
                        e.event_type
                    )
                }
                Refusal::InvalidData(errors) => {
                    format!(
                        "invalid-data at version {v}: {}",
                        crate::catalog::describe(&errors)
                    )
                }
            })?;
    }
    Ok(Checked {
        version,
        renditions,
    })
}

/// Claims up to `limit` unpublished events and fans them out; those that
/// fail the catalog are rejected instead. `traced`: list the published
/// events with their trace contexts (for their publication spans). On
/// SQLite it runs on the connection of the write `turn`.
pub async fn claim_batch(
    db: &sea_orm::DatabaseConnection,
    turn: Option<&mut super::writer::Held>,
    catalog: &Catalog,
    routes: &crate::notify::Routes,
    (limit, traced): (u32, bool),
    now_ms: i64,
    instance_id: &str,
) -> Result<Fanout, StoreError> {
    let backend = db.get_database_backend();
    // On SQLite the turn's transaction holds the write lock from its start
    // (so it cannot fail to upgrade). PostgreSQL takes the feed counter only
    // at the end of `publish`, and only when there is something to publish:
    // a poll that finds nothing must not hold the lock every publisher needs
    // (an instance paused mid-poll would stall every other instance's
    // ingest).
    let txn = super::writer::begin(db, turn).await?;
    let events = super::query_all(
        &txn,
        sql(
            backend,
            &format!(
                "SELECT event_id, partner_id, type, subject_type, subject_id, schema_version, payload, renditions, \
                 created_at, traceparent, tracestate FROM outbox_event WHERE published_at IS NULL ORDER BY created_at, event_id LIMIT ?{}",
                skip_locked(backend)
            ),
            vec![i64::from(limit).into()],
        ),
        |r| {
            Ok(Unpublished {
                id: r.try_get("", "event_id")?,
                partner_id: r.try_get("", "partner_id")?,
                event_type: r.try_get("", "type")?,
                subject_type: r.try_get("", "subject_type")?,
                subject_id: r.try_get("", "subject_id")?,
                schema_version: r.try_get("", "schema_version")?,
                payload: r.try_get("", "payload")?,
                renditions: r.try_get("", "renditions")?,
                created_at: r.try_get("", "created_at")?,
                trace: match traced {
                    true => {
                        let parent: Option<String> = r.try_get("", "traceparent")?;
                        let state: Option<String> = r.try_get("", "tracestate")?;
                        parent.and_then(|p| TraceContext::parse(&p, state.as_deref()))
                    }
                    false => None,
                },
            })
        },
    )
    .await?;
    if events.is_empty() {
        txn.rollback().await?;
        return Ok(Fanout::default());
    }
    let mut good: Vec<(&Unpublished, Checked)> = Vec::with_capacity(events.len());
    let mut rejected = 0;
    for e in &events {
        match check(catalog, e) {
            Ok(c) => good.push((e, c)),
            Err(reason) => {
                tracing::warn!(event = %e.id, event_type = %e.event_type, %reason, "an event written around the API fails the catalog; rejected, never delivered");
                reject(&txn, &e.id, &reason, now_ms).await?;
                rejected += 1;
            }
        }
    }
    let published: Vec<Published<'_>> = good
        .iter()
        .map(|(e, c)| Published {
            id: &e.id,
            partner_id: &e.partner_id,
            event_type: &e.event_type,
            subject_type: e.subject_type.as_deref(),
            subject_id: e.subject_id.as_deref(),
            schema_version: c.version,
            payload: &e.payload,
            renditions: &c.renditions,
            created_at: e.created_at,
        })
        .collect();
    let mut fanout = if published.is_empty() {
        Fanout::default()
    } else {
        publish(
            &txn,
            catalog,
            &published,
            now_ms,
            instance_id,
            &Preclaim::none(),
            None,
        )
        .await?
        .fanout
    };
    super::notices::expand(&txn, &published, routes, now_ms).await?;
    fanout.rejected = rejected;
    txn.commit().await?;
    if traced {
        fanout.published = good
            .into_iter()
            .map(|(e, _)| PublishedEvent {
                id: e.id.clone(),
                partner_id: e.partner_id.clone(),
                event_type: e.event_type.clone(),
                trace: e.trace.clone(),
            })
            .collect();
    }
    Ok(fanout)
}

/// Marks an event rejected: out of the queue, out of the feed, never sent.
async fn reject(
    txn: &impl ConnectionTrait,
    event_id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    txn.execute_raw(sql(
        txn.get_database_backend(),
        "UPDATE outbox_event SET published_at = ?, rejected_reason = ? WHERE event_id = ?",
        vec![now_ms.into(), reason.into(), event_id.into()],
    ))
    .await?;
    Ok(())
}
