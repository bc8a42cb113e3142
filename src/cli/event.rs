//! `hookd event get`: any partner's event exactly as its deliveries carry
//! it, with each delivery's state, as GET /v1/admin/events/{id} shows it.

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
}

pub async fn run(ctx: &Ctx, command: EventCommand) -> anyhow::Result<()> {
    let EventCommand::Get { id, json } = command;
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
