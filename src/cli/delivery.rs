//! `hookd delivery list|get|replay|skip` (and `attempts`, see `attempts`): every partner's deliveries as the
//! operator API shows them (its query parsing and filters, its shapes), and
//! a replay or a skip as the operator API does it, audited `via: cli`.

use clap::{Args, Subcommand};
use serde_json::json;

use super::{
    ctx::Ctx,
    exit::{self, from_problem},
    out::{self, emit},
    page::query,
};
use crate::{
    http::{
        admin_deliveries::{AdminDeliveryDetail, AdminDeliveryOut, OperatorFilters},
        body,
        page::Page,
        partner::{
            deliveries::{AttemptOut, DeliveryDetail, DeliveryQuery, ReplayQueued, ReplaySends},
            ordering::skip_in,
        },
    },
    store::{
        self,
        admin::DeliverySearch,
        audit::Action,
        endpoints::EndpointStatus,
        scoped::{DeliveryRow, for_partner},
    },
};

#[derive(Debug, Subcommand)]
pub enum DeliveryCommand {
    /// Search every partner's deliveries, newest first.
    List(Box<DeliveryList>),
    /// Show a delivery with every attempt: when, status, error, latency and
    /// the start of the receiver's answer.
    Get {
        /// The delivery's id (`dlv_…`).
        id: String,
        /// Print it as JSON, as GET /v1/admin/deliveries/{id} answers.
        #[arg(long)]
        json: bool,
    },
    /// Send a delivery again now, whatever its state (a disabled endpoint's
    /// waits until it is enabled); written to the audit log.
    Replay {
        /// The delivery's id.
        id: String,
        /// Print the queued replay as JSON, as POST /v1/admin/deliveries/{id}/replay answers.
        #[arg(long)]
        json: bool,
    },
    /// List attempts across deliveries, newest first, by partner, endpoint,
    /// delivery, time and outcome.
    Attempts(Box<super::attempts::AttemptList>),
    /// Let a dead delivery that holds its subject go: the subject's next
    /// delivery is sent; this one stays dead. Written to the audit log.
    Skip {
        /// The delivery's id (the head `hookd endpoint held` lists).
        id: String,
        /// Print the delivery as JSON, as POST /v1/admin/deliveries/{id}/skip answers.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct DeliveryList {
    /// Only this partner's deliveries.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    /// Only deliveries to this endpoint.
    #[arg(long, value_name = "ENDPOINT_ID")]
    endpoint: Option<String>,
    /// Only deliveries of this event.
    #[arg(long, value_name = "EVENT_ID")]
    event: Option<String>,
    /// Only deliveries of events of this type.
    #[arg(long = "type", value_name = "EVENT_TYPE")]
    event_type: Option<String>,
    /// Only deliveries in this state: pending, paused, delivering, delivered,
    /// failed, dead, cancelled or skipped.
    #[arg(long)]
    state: Option<String>,
    /// Only deliveries created at or after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only deliveries created before this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only deliveries whose last attempt got this HTTP status.
    #[arg(long, value_name = "CODE")]
    status_code: Option<i32>,
    /// Only deliveries whose last attempt failed so: dns, connect, proxy, tls,
    /// timeout, http_status, client_error, redirect, blocked, body_too_large, auth or internal.
    #[arg(long)]
    category: Option<String>,
    /// How many to show, 1 to api.page_size_max (default: api.page_size_default).
    #[arg(long, value_name = "N")]
    limit: Option<i64>,
    /// Start after the previous page: the cursor it ended with (`next_cursor`).
    #[arg(long, value_name = "CURSOR")]
    after: Option<String>,
    /// Print the page as JSON, as GET /v1/admin/deliveries answers.
    #[arg(long)]
    json: bool,
}

pub async fn run(ctx: &Ctx, command: DeliveryCommand) -> anyhow::Result<()> {
    match command {
        DeliveryCommand::List(l) => list(ctx, *l).await,
        DeliveryCommand::Get { id, json } => get(ctx, &id, json).await,
        DeliveryCommand::Replay { id, json } => replay(ctx, &id, json).await,
        DeliveryCommand::Skip { id, json } => skip(ctx, &id, json).await,
        DeliveryCommand::Attempts(l) => super::attempts::list(ctx, *l).await,
    }
}

async fn list(ctx: &Ctx, l: DeliveryList) -> anyhow::Result<()> {
    // Parsed as the API parses its query: the same refusals, the same filters.
    let ours: OperatorFilters = body::query(&query(&[
        ("partner_id", l.partner),
        ("status_code", l.status_code.map(|c| c.to_string())),
        ("category", l.category),
    ]))
    .map_err(from_problem)?;
    let q: DeliveryQuery = body::query(&query(&[
        ("endpoint_id", l.endpoint),
        ("event_id", l.event),
        ("event_type", l.event_type),
        ("state", l.state),
        ("since", l.since),
        ("until", l.until),
        ("after", l.after),
        ("limit", l.limit.map(|n| n.to_string())),
    ]))
    .map_err(from_problem)?;
    let (filter, before, limit) = q.search(&ctx.config.api).map_err(from_problem)?;
    let search = DeliverySearch {
        filter,
        partner_id: ours.partner_id,
        status_code: ours.status_code,
        category: ours.category.map(|c| c.as_str().to_string()),
    };
    let rows = store::admin::deliveries(&ctx.db, &search, before.as_ref(), limit).await?;
    let shown = Page::of(
        rows,
        limit,
        |(_, d): &(String, DeliveryRow)| (d.created_at, d.id.as_str()),
        |(partner_id, d)| AdminDeliveryOut {
            partner_id,
            delivery: d.into(),
        },
    );
    emit(l.json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|a| {
                let d = &a.delivery;
                vec![
                    d.id.clone(),
                    d.state.clone(),
                    d.attempt_count.to_string(),
                    out::outcome(d.last_status, d.last_error_category.as_deref()),
                    d.created_at.clone(),
                    d.endpoint_id.clone(),
                    d.event_type.clone(),
                ]
            })
            .collect();
        out::table(
            &[
                "ID", "STATE", "ATTEMPTS", "LAST", "CREATED", "ENDPOINT", "TYPE",
            ],
            &rows,
        ) + &out::more(shown.next_cursor.as_deref())
    })
}

async fn get(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let missing = || exit::not_found(format!("delivery {id}"));
    let partner_id = store::admin::delivery_owner(&ctx.db, id)
        .await?
        .ok_or_else(missing)?;
    let (d, attempts) = for_partner(&ctx.db, &partner_id)
        .delivery_with_attempts(id)
        .await?
        .ok_or_else(missing)?;
    let shown = AdminDeliveryDetail {
        partner_id,
        detail: DeliveryDetail {
            delivery: d.into(),
            attempts: attempts.into_iter().map(AttemptOut::from).collect(),
        },
    };
    emit(json, &shown, || {
        let d = &shown.detail.delivery;
        let head = out::fields(&[
            ("id", Some(d.id.clone())),
            ("partner", Some(shown.partner_id.clone())),
            ("endpoint", Some(d.endpoint_id.clone())),
            ("event", Some(format!("{} ({})", d.event_id, d.event_type))),
            ("state", Some(d.state.clone())),
            ("reason", d.reason.clone()),
            ("attempts", Some(d.attempt_count.to_string())),
            ("next attempt", d.next_attempt_at.clone()),
            ("created", Some(d.created_at.clone())),
        ]);
        let rows: Vec<Vec<String>> = shown
            .detail
            .attempts
            .iter()
            .map(|a| {
                vec![
                    a.attempt_no.to_string(),
                    a.started_at.clone(),
                    a.trigger.clone(),
                    out::outcome(a.status_code, a.error_category.as_deref()),
                    out::cell(a.latency_ms.map(|l| format!("{l} ms"))),
                    out::cell(a.next_attempt_at.clone()),
                    out::cell(a.url.clone()),
                    a.error_detail.clone().unwrap_or_default(),
                ]
            })
            .collect();
        format!(
            "{head}\n\n{}",
            out::table(
                &[
                    "#",
                    "STARTED",
                    "TRIGGER",
                    "RESULT",
                    "LATENCY",
                    "NEXT RETRY",
                    "URL",
                    "DETAIL"
                ],
                &rows
            )
        )
    })
}

async fn replay(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let missing = || exit::not_found(format!("delivery {id}"));
    let partner_id = store::admin::delivery_owner(&ctx.db, id)
        .await?
        .ok_or_else(missing)?;
    let scoped = for_partner(&ctx.db, &partner_id);
    if let Some(d) = scoped.delivery(id).await?
        && d.state == "skipped"
    {
        anyhow::bail!(
            "delivery {id} was skipped: the event has no valid rendering at the endpoint's pinned \
             version; pin another version or publish the event with a rendition for it"
        );
    }
    let (replay_id, d) = scoped.replay(id, ctx.now()).await?.ok_or_else(missing)?;
    ctx.announce(&d.endpoint_id).await;
    let active = scoped
        .endpoint(&d.endpoint_id)
        .await?
        .is_some_and(|e| e.status == EndpointStatus::Active);
    let (sends, waiting_for) = if active {
        (ReplaySends::Now, None)
    } else {
        let why = format!(
            "the endpoint is disabled: the replay goes when it is enabled (hookd endpoint enable {})",
            d.endpoint_id
        );
        (ReplaySends::WhenEnabled, Some(why))
    };
    let detail =
        json!({"replay_id": replay_id, "event_id": d.event_id, "endpoint_id": d.endpoint_id});
    ctx.audit(Action::DeliveryReplay, &d.id, Some(&partner_id), detail)
        .await?;
    let shown = ReplayQueued {
        replay_id,
        delivery_id: d.id,
        event_id: d.event_id,
        endpoint_id: d.endpoint_id,
        sends,
        waiting_for,
    };
    emit(json, &shown, || {
        let when = shown
            .waiting_for
            .clone()
            .unwrap_or_else(|| "it goes now".to_string());
        format!(
            "queued replay {} of delivery {} (event {}) to endpoint {}: {when}",
            shown.replay_id, shown.delivery_id, shown.event_id, shown.endpoint_id
        )
    })
}

async fn skip(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let partner_id = store::admin::delivery_owner(&ctx.db, id)
        .await?
        .ok_or_else(|| exit::not_found(format!("delivery {id}")))?;
    let d = skip_in(&ctx.db, &partner_id, id, ctx.now())
        .await
        .map_err(from_problem)?;
    ctx.announce(&d.endpoint_id).await;
    let detail = json!({"event_id": d.event_id, "endpoint_id": d.endpoint_id});
    ctx.audit(Action::DeliverySkip, &d.id, Some(&partner_id), detail)
        .await?;
    emit(json, &d, || {
        format!(
            "skipped delivery {} (event {}): the next delivery of its subject to endpoint {} goes now; \
             this one stays dead (hookd delivery replay {} still sends it, out of order)",
            d.id, d.event_id, d.endpoint_id, d.id
        )
    })
}
