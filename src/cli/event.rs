//! `hookd event get`: any partner's event exactly as its deliveries carry
//! it, with each delivery's state, as GET /v1/admin/events/{id} shows it;
//! `hookd event list`, as GET /v1/admin/events lists them; and `hookd
//! event publish` (see `publish`).

use clap::{Args, Subcommand};

use super::{
    ctx::Ctx,
    exit::{self, from_problem},
    out::{self, emit},
    page::{PageArgs, query},
};
use crate::{
    http::{
        admin_events::{self, AdminEventDetail, AdminEventItem, EventsQuery},
        body,
        partner::events::{EventDetail, EventOut},
    },
    store::{self, scoped::for_partner},
};

#[derive(Debug, Subcommand)]
pub enum EventCommand {
    /// Show an event (published, waiting or rejected) and its deliveries.
    Get {
        /// The event's id (`evt_…`).
        id: String,
        /// Print it as JSON, as GET /v1/admin/events/{id} answers.
        #[arg(long)]
        json: bool,
    },
    /// List every partner's events, newest first (or, with --state
    /// rejected, those the fanout refused and why).
    List(EventList),
    /// Publish one event (an object) or a batch (an array), checked as
    /// POST /v1/events checks them; a running serve delivers them. Audited.
    Publish {
        /// A JSON file with the event or the batch (`-` or none: stdin).
        #[arg(value_name = "FILE")]
        file: Option<std::path::PathBuf>,
        /// Print the stored event (or `{data, created}`) as POST /v1/events answers.
        #[arg(long)]
        json: bool,
    },
    /// Write a partner's events created in a time range as NDJSON, as
    /// GET /v1/events/export streams them: one envelope a line, then an
    /// `end` line saying whether the range is complete.
    Export(super::event_export::EventExport),
}

#[derive(Debug, Args)]
pub struct EventList {
    /// `rejected`: the events the fanout refused (only --limit applies then).
    #[arg(long, value_name = "STATE")]
    state: Option<String>,
    /// Only this partner's events.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    /// Only events of this type.
    #[arg(long = "type", value_name = "EVENT_TYPE")]
    event_type: Option<String>,
    /// Only events received at or after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only events received before this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    #[command(flatten)]
    page: PageArgs,
    /// Print the page as JSON, as GET /v1/admin/events answers.
    #[arg(long)]
    json: bool,
}

pub async fn run(ctx: &Ctx, command: EventCommand) -> anyhow::Result<()> {
    match command {
        EventCommand::List(l) => list(ctx, l).await,
        EventCommand::Get { id, json } => get(ctx, id, json).await,
        EventCommand::Publish { file, json } => {
            super::publish::publish(ctx, file.as_deref(), json).await
        }
        EventCommand::Export(e) => super::event_export::export(ctx, e).await,
    }
}

async fn list(ctx: &Ctx, l: EventList) -> anyhow::Result<()> {
    // Read as the API reads its query: the same refusals.
    let q: EventsQuery = body::query(&query(&[
        ("state", l.state),
        ("partner_id", l.partner),
        ("type", l.event_type),
        ("since", l.since),
        ("until", l.until),
        ("after", l.page.after),
        ("limit", l.page.limit.map(|n| n.to_string())),
    ]))
    .map_err(from_problem)?;
    let shown = admin_events::read(&ctx.db, &ctx.config.api, q)
        .await
        .map_err(from_problem)?;
    emit(l.json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|item| match item {
                AdminEventItem::Published(e) => {
                    let envelope = serde_json::to_value(&e.event).unwrap_or_default();
                    let field = |k: &str| envelope[k].as_str().unwrap_or_default().to_string();
                    vec![
                        e.received_at.clone(),
                        field("event_id"),
                        field("type"),
                        e.partner_id.clone(),
                        out::cell(e.published_at.clone().map(|at| format!("published {at}"))),
                    ]
                }
                AdminEventItem::Rejected(r) => vec![
                    r.created_at.clone(),
                    r.event_id.clone(),
                    r.event_type.clone(),
                    r.partner_id.clone(),
                    format!("rejected: {}", r.reason),
                ],
            })
            .collect();
        out::table(&["RECEIVED", "ID", "TYPE", "PARTNER", "STATE"], &rows)
            + &out::more(shown.next_cursor.as_deref())
    })
}

async fn get(ctx: &Ctx, id: String, json: bool) -> anyhow::Result<()> {
    let missing = || exit::not_found(format!("event {id}"));
    let partner_id = store::admin::event_owner(&ctx.db, &id)
        .await?
        .ok_or_else(missing)?;
    let (event, deliveries) = for_partner(&ctx.db, &partner_id)
        .event(&id)
        .await?
        .ok_or_else(missing)?;
    let shown = AdminEventDetail {
        partner_id,
        detail: EventDetail {
            event: EventOut::from(&event),
            deliveries: deliveries.into_iter().map(Into::into).collect(),
        },
    };
    emit(json, &shown, || {
        let envelope = serde_json::to_value(&shown.detail.event)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_default();
        let rows: Vec<Vec<String>> = shown
            .detail
            .deliveries
            .iter()
            .map(|d| {
                vec![
                    d.id.clone(),
                    d.state.clone(),
                    d.attempt_count.to_string(),
                    d.endpoint_id.clone(),
                ]
            })
            .collect();
        format!(
            "event {id} of partner {}\n{envelope}\n\ndeliveries:\n{}",
            shown.partner_id,
            out::table(&["ID", "STATE", "ATTEMPTS", "ENDPOINT"], &rows)
        )
    })
}
