//! `hookd event get`: any partner's event exactly as its deliveries carry
//! it, with each delivery's state, as GET /v1/admin/events/{id} shows it;
//! and `hookd event publish` (see `publish`).

use clap::Subcommand;

use super::{
    ctx::Ctx,
    exit,
    out::{self, emit},
};
use crate::{
    http::{
        admin_events::AdminEventDetail,
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
}

pub async fn run(ctx: &Ctx, command: EventCommand) -> anyhow::Result<()> {
    match command {
        EventCommand::Get { id, json } => get(ctx, id, json).await,
        EventCommand::Publish { file, json } => {
            super::publish::publish(ctx, file.as_deref(), json).await
        }
    }
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
