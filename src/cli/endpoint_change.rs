//! The endpoint commands that change something, on the partner's behalf as
//! the operator API does it: the partner API's checks, its scoped store
//! calls, an audit entry (`via: cli`), and a word to running instances.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use clap::Args;
use serde_json::json;

use super::{
    ctx::Ctx,
    endpoint_view::{find, shown, text},
    exit::{self, from_problem},
    out::emit,
    routing_args::{FilterArgs, OnDeadArg, OrderingArg},
};
use crate::{
    domain::ordering::{OnDead, Ordering},
    http::partner::filters::filter_after,
    store::{
        audit::Action,
        endpoints::{Endpoint, EndpointStatus, Kind},
        scoped::{EndpointPatch, for_partner},
    },
};

#[derive(Debug, Args)]
pub struct EndpointUpdate {
    /// The endpoint's id.
    id: String,
    /// A new URL, judged as at creation (egress settings, or --dev).
    #[arg(long)]
    url: Option<String>,
    /// A new description.
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// The event types to receive, comma-separated, replacing the current
    /// ones (`usage.*` matches a family; an empty value: every type).
    #[arg(long, value_delimiter = ',', value_name = "TYPES")]
    event_types: Option<Vec<String>>,
    /// The schema version to receive events at.
    #[arg(long, value_name = "VERSION")]
    schema_version: Option<String>,
    /// Requests in flight at most, 1 to 256.
    #[arg(long, value_name = "N")]
    concurrency: Option<u32>,
    /// Requests per second at most, 1 to 10000.
    #[arg(long, value_name = "N")]
    rate_limit: Option<u32>,
    /// none, or subject: one delivery at a time per subject, in commit order.
    #[arg(long, value_enum, value_name = "ORDERING")]
    ordering: Option<OrderingArg>,
    /// What an ordered subject does when its head dies: skip or hold.
    #[arg(long, value_enum, value_name = "ON_DEAD")]
    on_dead: Option<OnDeadArg>,
    #[command(flatten)]
    filter: FilterArgs,
    /// Remove the filter: every event of the endpoint's types gets a delivery.
    #[arg(long, conflicts_with_all = ["filter", "filter_file"])]
    no_filter: bool,
    /// Print the endpoint as JSON, as GET /v1/admin/endpoints/{id} answers.
    #[arg(long)]
    json: bool,
}

/// A notification endpoint is the partner's notification URL, and the
/// operator's is `notify.operator_url`: neither is changed here.
pub(super) fn managed_here(e: &Endpoint) -> anyhow::Result<()> {
    match e.kind {
        Kind::Endpoint => Ok(()),
        Kind::Notification => anyhow::bail!(
            "endpoint {} is partner {}'s notification URL: change or remove it with \
             `hookd partner update {} --notification-url URL` (or --no-notification-url)",
            e.id,
            e.partner_id,
            e.partner_id
        ),
        Kind::Operator => anyhow::bail!(
            "endpoint {} is the operator's notification endpoint: it follows notify.operator_url",
            e.id
        ),
    }
}

pub async fn update(ctx: &Ctx, u: EndpointUpdate) -> anyhow::Result<()> {
    use crate::http::partner::endpoint_ops::{check_range, check_text, check_types};
    let before = find(ctx, &u.id).await?;
    managed_here(&before)?;
    let types = u
        .event_types
        .map(|t| t.into_iter().filter(|t| !t.is_empty()).collect::<Vec<_>>());
    if let Some(t) = &types {
        check_types(t).map_err(from_problem)?;
    }
    if let Some(d) = &u.description {
        check_text("description", d, 1000).map_err(from_problem)?;
    }
    if let Some(v) = &u.schema_version {
        check_text("schema_version", v, 32).map_err(from_problem)?;
    }
    check_range("concurrency", u.concurrency, 1..=256).map_err(from_problem)?;
    check_range("rate_limit", u.rate_limit, 1..=10_000).map_err(from_problem)?;
    let given_filter = if u.no_filter {
        Some(None)
    } else {
        u.filter.given()?.map(Some)
    };
    // The filter is checked against the types the endpoint is left with.
    let filter = if given_filter.is_some() || types.is_some() {
        let catalog = ctx.catalog()?;
        let given = given_filter.as_ref().map(Option::as_ref);
        filter_after(&catalog, &before, types.as_deref(), given).map_err(from_problem)?
    } else {
        None
    };
    let url = match &u.url {
        Some(url) => Some(ctx.checked_url("--url", url).await?),
        None => None,
    };
    let detail = json!({
        "url": url, "description": u.description, "event_types": types,
        "schema_version": u.schema_version, "concurrency": u.concurrency, "rate_limit": u.rate_limit,
        "ordering": u.ordering.map(|o| Ordering::from(o).as_str()),
        "ordering_on_dead": u.on_dead.map(|d| OnDead::from(d).as_str()),
        "filter": given_filter.clone().flatten(),
    });
    let mut given: serde_json::Map<String, serde_json::Value> = detail
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if given_filter == Some(None) {
        given.insert("filter".into(), serde_json::Value::Null);
    }
    if given.is_empty() {
        return Err(exit::usage(
            "nothing to change: give --url, --description, --event-types, --schema-version, \
             --concurrency, --rate-limit, --ordering, --on-dead, --filter or --no-filter",
        ));
    }
    let patch = EndpointPatch {
        url,
        description: u.description,
        event_types: types,
        schema_version: u.schema_version.map(Some),
        schema_versions: None,
        concurrency: u.concurrency,
        rate_limit: u.rate_limit.map(Some),
        ordering: u.ordering.map(Into::into),
        on_dead: u.on_dead.map(Into::into),
        filter,
    };
    let e = for_partner(&ctx.db, &before.partner_id)
        .update_endpoint(&u.id, patch, ctx.now())
        .await?
        .ok_or_else(|| exit::not_found(format!("endpoint {}", u.id)))?;
    ctx.announce(&e.id).await;
    ctx.audit(
        Action::EndpointUpdate,
        &e.id,
        Some(&e.partner_id),
        given.into(),
    )
    .await?;
    let shown = shown(ctx, e).await?;
    emit(u.json, &shown, || {
        format!("updated endpoint {}\n{}", shown.endpoint.id, text(&shown))
    })
}

/// Enables or disables any partner's endpoint as its partner would, as
/// the operator API does (same reason, same audit entry).
pub async fn set_status(
    ctx: &Ctx,
    id: &str,
    status: EndpointStatus,
    given: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    use crate::http::partner::endpoint_ops::check_text;
    let before = find(ctx, id).await?;
    if let Some(r) = &given {
        check_text("reason", r, 500).map_err(from_problem)?;
    }
    let (action, reason) = match status {
        EndpointStatus::Active => (Action::EndpointEnable, None),
        _ => (
            Action::EndpointDisable,
            Some(given.as_deref().unwrap_or("disabled by the operator")),
        ),
    };
    let (e, effects) = for_partner(&ctx.db, &before.partner_id)
        .set_status(
            id,
            status,
            reason,
            ctx.now(),
            ctx.config.api.replay_window_ms(),
        )
        .await?
        .ok_or_else(|| exit::not_found(format!("endpoint {id}")))?;
    ctx.announce(&e.id).await;
    let detail = json!({
        "reason": reason.or(given.as_deref()),
        "previous_status": before.status.as_str(),
        "paused": effects.paused,
        "resumed": effects.resumed,
        "dead": effects.dead,
    });
    ctx.audit(action, &e.id, Some(&e.partner_id), detail)
        .await?;
    let shown = shown(ctx, e).await?;
    emit(json, &shown, || {
        let what = match status {
            EndpointStatus::Active => format!(
                "enabled endpoint {id}: {} paused deliveries resumed, {} too old for the replay window are dead",
                effects.resumed, effects.dead
            ),
            _ => format!(
                "disabled endpoint {id} ({}): {} deliveries paused",
                reason.unwrap_or_default(),
                effects.paused
            ),
        };
        if before.status == status {
            format!("endpoint {id} was already {}", status.as_str())
        } else {
            what
        }
    })
}

pub async fn delete(ctx: &Ctx, id: &str, yes: bool, json: bool) -> anyhow::Result<()> {
    let before = find(ctx, id).await?;
    managed_here(&before)?;
    if !yes && !confirmed(&before)? {
        return Err(exit::usage(format!(
            "not deleted: add --yes to delete endpoint {id} ({}) with its deliveries and their attempts",
            before.url
        )));
    }
    if !for_partner(&ctx.db, &before.partner_id)
        .delete_endpoint(id)
        .await?
    {
        return Err(exit::not_found(format!("endpoint {id}")));
    }
    ctx.announce(id).await;
    let detail = json!({"url": before.url, "status": before.status.as_str()});
    ctx.audit(Action::EndpointDelete, id, Some(&before.partner_id), detail)
        .await?;
    emit(json, &json!({"id": id, "deleted": true}), || {
        format!("deleted endpoint {id} ({}) with its deliveries", before.url)
    })
}

/// Asks at a terminal; anywhere else the answer is no (`--yes` says yes).
fn confirmed(e: &Endpoint) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!(
        "delete endpoint {} ({}) of partner {} with its deliveries and their attempts? [y/N] ",
        e.id, e.url, e.partner_id
    );
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
