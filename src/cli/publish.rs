//! `hookd event publish`: one event or a batch, from a file or stdin,
//! with the checks of `POST /v1/events` (its parsing, its catalog, its
//! repeats and conflicts), written to the outbox in one transaction; a
//! running `serve` fans them out. Each new event is audited `via: cli`.

use std::path::Path;

use sea_orm::TransactionTrait as _;
use serde_json::json;

use super::{ctx::Ctx, exit::from_problem, input::read_file_or_stdin, out::emit};
use crate::{
    domain::event::{NewEvent, envelope_json},
    http::{
        ingest::{self, BatchOut},
        problem::Problem,
    },
    store::{self, audit::Action},
};

pub async fn publish(ctx: &Ctx, file: Option<&Path>, json: bool) -> anyhow::Result<()> {
    let body = read_file_or_stdin(file)?;
    let catalog = ctx.catalog()?;
    let now = ctx.now();
    let config = &ctx.config;
    let screen = &config.payload.screen;
    let parsed = ingest::parse_request(body.as_bytes(), now, &config.ingest, &catalog, screen)
        .map_err(refused)?;
    ingest::partners_exist(&ctx.db, &parsed)
        .await
        .map_err(refused)?;
    let (stored, fresh) = ingest::sort_out(&ctx.db, &parsed.events)
        .await
        .map_err(refused)?;
    if !fresh.is_empty() {
        insert(ctx, &fresh, now).await?;
    }
    for e in &fresh {
        let detail = json!({"type": e.event_type, "schema_version": e.schema_version});
        ctx.audit(
            Action::EventPublish,
            e.id.as_str(),
            Some(&e.partner_id),
            detail,
        )
        .await?;
    }
    let text = || said(&stored, fresh.len());
    if parsed.batch {
        let shown = BatchOut {
            data: stored.iter().map(envelope_json).collect(),
            created: fresh.len(),
        };
        emit(json, &shown, text)
    } else {
        emit(json, &envelope_json(&stored[0]), text)
    }
}

/// The API's refusal of the file's events, with the exit status of its
/// kind: the fields it names are the file's (`events[1].data`), not
/// flags, and every refused event is listed, on one line.
fn refused(mut p: Problem) -> anyhow::Error {
    p.field = None;
    let listed: Vec<String> = p
        .errors
        .iter()
        .flatten()
        .filter(|e| !p.detail.contains(&e.message))
        .map(|e| format!("{} {}", e.pointer, e.message))
        .collect();
    if !listed.is_empty() {
        p.detail = format!("{}: {}", p.detail, listed.join("; "));
    }
    from_problem(p)
}

/// Writes the new events to the outbox, all or none.
async fn insert(ctx: &Ctx, fresh: &[NewEvent], now: i64) -> anyhow::Result<()> {
    let txn = ctx.db.begin().await?;
    match store::outbox::insert(&txn, fresh, now).await {
        Ok(_) => {}
        Err(store::StoreError::Db(e)) if ingest::is_unique_violation(&e) => {
            anyhow::bail!(
                "the same events were published by someone else meanwhile; run the command again"
            )
        }
        Err(e) => return Err(e.into()),
    }
    txn.commit().await?;
    Ok(())
}

/// What was published, for a person.
fn said(stored: &[NewEvent], created: usize) -> String {
    let lines: Vec<String> = stored
        .iter()
        .map(|e| format!("  {}  {}  partner {}", e.id, e.event_type, e.partner_id))
        .collect();
    let repeats = stored.len() - created;
    let repeated = if repeats > 0 {
        format!(" ({repeats} already published with this content)")
    } else {
        String::new()
    };
    format!(
        "published {created} new event(s){repeated}; a running `hookd serve` delivers them:\n{}",
        lines.join("\n")
    )
}
