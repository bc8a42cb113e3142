//! `hookd audit list`: the audit log of operator actions, newest first,
//! with the filters and the answer of GET /v1/admin/audit.

use clap::{Args, Subcommand};

use super::{
    ctx::Ctx,
    exit::from_problem,
    out::{self, emit},
    page::{PageArgs, query},
};
use crate::http::{
    admin_audit::{self, AuditQuery},
    body,
};

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// List the audit log, newest first: who did what to which object, and how.
    List(AuditList),
}

#[derive(Debug, Args)]
pub struct AuditList {
    /// Only this action, e.g. endpoint.disable.
    #[arg(long, value_name = "ACTION")]
    action: Option<String>,
    /// Only actions on this object (an endpoint, delivery, key or event id).
    #[arg(long, value_name = "ID")]
    target: Option<String>,
    /// Only actions on this partner's objects.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    #[command(flatten)]
    page: PageArgs,
    /// Print the page as JSON, as GET /v1/admin/audit answers.
    #[arg(long)]
    json: bool,
}

pub async fn run(ctx: &Ctx, command: AuditCommand) -> anyhow::Result<()> {
    let AuditCommand::List(l) = command;
    // Read as the API reads its query: the same refusals.
    let q: AuditQuery = body::query(&query(&[
        ("action", l.action),
        ("target", l.target),
        ("partner_id", l.partner),
        ("after", l.page.after),
        ("limit", l.page.limit.map(|n| n.to_string())),
    ]))
    .map_err(from_problem)?;
    let shown = admin_audit::read(&ctx.db, &ctx.config.api, q)
        .await
        .map_err(from_problem)?;
    emit(l.json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|e| {
                vec![
                    e.at.clone(),
                    e.action.clone(),
                    e.target.clone(),
                    out::cell(e.partner_id.clone()),
                    // The CLI acts as no key: `cli`; others name theirs.
                    if e.key_id == "cli" {
                        e.via.clone()
                    } else {
                        format!("{} ({})", e.via, e.key_id)
                    },
                    e.remote_addr.clone(),
                ]
            })
            .collect();
        out::table(&["AT", "ACTION", "TARGET", "PARTNER", "VIA", "FROM"], &rows)
            + &out::more(shown.next_cursor.as_deref())
    })
}
