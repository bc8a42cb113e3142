//! `hookd incident open|resolve|list`: the operator API's incident routes
//! on the command line. Opening and resolving tell the partner (its
//! notices are queued for the running hookd to send) and are audited.

use clap::Subcommand;
use serde_json::json;

use super::{
    ctx::Ctx,
    exit::from_problem,
    out::{self, emit},
};
use crate::{
    domain::incident::Incident,
    http::incidents::{IncidentList, IncidentOut, open_manual, resolve_manual},
    store::{audit::Action, incidents},
};

#[derive(Debug, Subcommand)]
pub enum IncidentCommand {
    /// Open an incident for a partner by hand: the partner is told
    /// (hookd.incident.opened) with the message. Audited.
    Open {
        /// The partner's id.
        #[arg(long)]
        partner: String,
        /// What happened, in words the partner reads (1 to 1000 characters).
        #[arg(long)]
        message: String,
        /// Print the incident as JSON, as POST /v1/admin/incidents answers.
        #[arg(long)]
        json: bool,
    },
    /// Resolve an incident (any cause): the partner is told
    /// (hookd.incident.resolved) with the range and the delayed count. Audited.
    Resolve {
        /// The incident's id (inc_…).
        id: String,
        /// Print the incident as JSON, as POST /v1/admin/incidents/{id}/resolve answers.
        #[arg(long)]
        json: bool,
    },
    /// List incidents, open ones first, then the latest.
    List {
        /// Only this partner's.
        #[arg(long)]
        partner: Option<String>,
        /// Only the open ones.
        #[arg(long)]
        open: bool,
        /// At most this many (1 to 500).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: u32,
        /// Print them as JSON, as GET /v1/admin/incidents answers.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(ctx: &Ctx, command: IncidentCommand) -> anyhow::Result<()> {
    match command {
        IncidentCommand::Open {
            partner,
            message,
            json,
        } => {
            let opened = open_manual(&ctx.db, &partner, &message, ctx.now())
                .await
                .map_err(from_problem)?;
            let detail = json!({"message": opened.message});
            ctx.audit(Action::IncidentOpen, &opened.id, Some(&partner), detail)
                .await?;
            show(json, opened, "opened")
        }
        IncidentCommand::Resolve { id, json } => {
            let resolved = resolve_manual(&ctx.db, &id, ctx.now())
                .await
                .map_err(from_problem)?;
            let detail = json!({"delayed_events": resolved.delayed_events});
            let partner = resolved.partner_id.clone();
            ctx.audit(Action::IncidentResolve, &id, Some(&partner), detail)
                .await?;
            show(json, resolved, "resolved")
        }
        IncidentCommand::List {
            partner,
            open,
            limit,
            json,
        } => {
            let rows = incidents::list(&ctx.db, partner.as_deref(), open, limit).await?;
            let shown = IncidentList {
                data: rows.into_iter().map(IncidentOut::from).collect(),
            };
            emit(json, &shown, || {
                let rows: Vec<Vec<String>> = shown
                    .data
                    .iter()
                    .map(|i| {
                        vec![
                            i.id.clone(),
                            i.partner_id.clone(),
                            i.state.clone(),
                            i.cause.clone(),
                            i.started_at.clone(),
                            out::cell(i.resolved_at.clone()),
                            out::cell(i.delayed_events.map(|n| n.to_string())),
                            i.message.clone(),
                        ]
                    })
                    .collect();
                out::table(
                    &[
                        "ID", "PARTNER", "STATE", "CAUSE", "STARTED", "RESOLVED", "DELAYED",
                        "MESSAGE",
                    ],
                    &rows,
                )
            })
        }
    }
}

fn show(json: bool, incident: Incident, done: &str) -> anyhow::Result<()> {
    let shown = IncidentOut::from(incident);
    emit(json, &shown, || {
        format!(
            "{done} incident {}\n{}",
            shown.id,
            out::fields(&[
                ("partner", Some(shown.partner_id.clone())),
                ("cause", Some(shown.cause.clone())),
                ("started", Some(shown.started_at.clone())),
                ("resolved", shown.resolved_at.clone()),
                (
                    "delayed events",
                    shown.delayed_events.map(|n| n.to_string())
                ),
                ("message", Some(shown.message.clone())),
            ])
        )
    })
}
