//! `hookd delivery attempts`: attempts across deliveries, newest first,
//! narrowed by partner, endpoint, delivery, time and outcome; each as
//! GET /v1/admin/deliveries/{id} shows its attempts, with whose it is.

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::{
    ctx::Ctx,
    exit::from_problem,
    out::{self, emit},
    page::PageArgs,
};
use crate::{
    http::{body, page::Page, partner::deliveries::AttemptOut},
    store::attempt_search::{self, AttemptRow, AttemptSearch, Outcome},
};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutcomeArg {
    /// Answered 2xx.
    Succeeded,
    /// Any failure: an error status, a timeout, a refused connection, …
    Failed,
}

#[derive(Debug, Args)]
pub struct AttemptList {
    /// Only attempts to this partner's endpoints.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    /// Only attempts to this endpoint.
    #[arg(long, value_name = "ENDPOINT_ID")]
    endpoint: Option<String>,
    /// Only attempts of this delivery.
    #[arg(long, value_name = "DELIVERY_ID")]
    delivery: Option<String>,
    /// Only attempts started at or after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only attempts started before this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only attempts that ended so.
    #[arg(long, value_enum)]
    outcome: Option<OutcomeArg>,
    /// Only failures of this category: dns, connect, proxy, tls, timeout,
    /// http_status, client_error, redirect, blocked, body_too_large, auth or internal.
    #[arg(long)]
    category: Option<String>,
    #[command(flatten)]
    page: PageArgs,
    /// Print the page as JSON (`data`, `next_cursor`).
    #[arg(long)]
    json: bool,
}

/// One attempt with the delivery, endpoint and partner it belongs to.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AdminAttemptOut {
    pub partner_id: String,
    pub endpoint_id: String,
    pub delivery_id: String,
    #[serde(flatten)]
    pub attempt: AttemptOut,
}

impl From<AttemptRow> for AdminAttemptOut {
    fn from(r: AttemptRow) -> Self {
        AdminAttemptOut {
            partner_id: r.partner_id,
            endpoint_id: r.endpoint_id,
            delivery_id: r.attempt.delivery_id.clone(),
            attempt: r.attempt.into(),
        }
    }
}

pub async fn list(ctx: &Ctx, l: AttemptList) -> anyhow::Result<()> {
    let (limit, before) = l.page.resolve(&ctx.config.api)?;
    let time = |field: &str, t: &Option<String>| -> anyhow::Result<Option<i64>> {
        match t.as_deref() {
            Some(t) => Ok(Some(body::time(field, t).map_err(from_problem)?)),
            None => Ok(None),
        }
    };
    let search = AttemptSearch {
        partner_id: l.partner,
        endpoint_id: l.endpoint,
        delivery_id: l.delivery,
        since: time("since", &l.since)?,
        until: time("until", &l.until)?,
        outcome: l.outcome.map(|o| match o {
            OutcomeArg::Succeeded => Outcome::Succeeded,
            OutcomeArg::Failed => Outcome::Failed,
        }),
        category: l.category,
    };
    let rows = attempt_search::attempts(&ctx.db, &search, before.as_ref(), limit).await?;
    let shown = Page::of(
        rows,
        limit,
        |r| (r.attempt.started_at, r.attempt.id.as_str()),
        AdminAttemptOut::from,
    );
    emit(l.json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|a| {
                let t = &a.attempt;
                let result = out::outcome(t.status_code, t.error_category.as_deref());
                vec![
                    t.started_at.clone(),
                    a.delivery_id.clone(),
                    t.attempt_no.to_string(),
                    result,
                    out::cell(t.latency_ms.map(|l| format!("{l} ms"))),
                    out::cell(t.next_attempt_at.clone()),
                    a.endpoint_id.clone(),
                    out::cell(t.url.clone()),
                    t.error_detail.clone().unwrap_or_default(),
                ]
            })
            .collect();
        out::table(
            &[
                "STARTED",
                "DELIVERY",
                "#",
                "RESULT",
                "LATENCY",
                "NEXT RETRY",
                "ENDPOINT",
                "URL",
                "DETAIL",
            ],
            &rows,
        ) + &out::more(shown.next_cursor.as_deref())
    })
}
