//! `hookd event export`: a partner's events created in a time range as
//! NDJSON on standard output, exactly as GET /v1/events/export streams them
//! (the same reading of the flags, the same pages, the same `end` line).

use std::io::Write as _;

use clap::Args;
use futures_util::StreamExt as _;

use super::{
    ctx::Ctx,
    exit::{self, from_problem},
    page::query,
};
use crate::{
    http::{
        body,
        partner::event_export::{self, ExportQuery},
    },
    store,
};

#[derive(Debug, Args)]
pub struct EventExport {
    /// The partner whose events to export.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: String,
    /// Events created at or after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    since: String,
    /// Events created before this time (RFC 3339; default: no upper bound).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only events of this type.
    #[arg(long = "type", value_name = "EVENT_TYPE")]
    event_type: Option<String>,
    /// Continue a range: the `next_cursor` of the previous export's `end` line.
    #[arg(long, value_name = "CURSOR")]
    after: Option<String>,
    /// Events to write at most, 1 to 10000 (the default).
    #[arg(long, value_name = "N")]
    limit: Option<i64>,
}

pub async fn export(ctx: &Ctx, e: EventExport) -> anyhow::Result<()> {
    // Read as the API reads its query: the same refusals.
    let q: ExportQuery = body::query(&query(&[
        ("since", Some(e.since)),
        ("until", e.until),
        ("type", e.event_type),
        ("after", e.after),
        ("limit", e.limit.map(|n| n.to_string())),
    ]))
    .map_err(from_problem)?;
    let export = event_export::read(q, ctx.now(), &ctx.config).map_err(from_problem)?;
    if store::partners::find(&ctx.db, &e.partner).await?.is_none() {
        return Err(exit::not_found(format!("partner {}", e.partner)));
    }
    let lines = event_export::lines(ctx.db.clone(), e.partner, export);
    futures_util::pin_mut!(lines);
    let mut out = std::io::stdout();
    while let Some(chunk) = lines.next().await {
        out.write_all(&chunk?)?;
        out.flush()?;
    }
    Ok(())
}
