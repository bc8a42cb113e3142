//! One endpoint as the endpoint commands show it: found among every
//! partner's, with its backlog read now (and for `get`, its circuit and
//! last error), as the operator API answers it, and as text for a person;
//! and the subjects it holds up behind their heads.

use super::{ctx::Ctx, exit, out};
use crate::{
    http::{
        admin_endpoint_detail::{self, AdminEndpointDetail},
        admin_endpoints::AdminEndpointOut,
        partner::ordering::HeldSubjects,
    },
    store::{self, endpoints::Endpoint},
};

/// Any partner's endpoint, or "does not exist" (exit 3).
pub async fn find(ctx: &Ctx, id: &str) -> anyhow::Result<Endpoint> {
    store::admin::endpoint(&ctx.db, id)
        .await?
        .ok_or_else(|| exit::not_found(format!("endpoint {id}")))
}

/// The operator API's answer for one endpoint, with its backlog read now.
pub async fn shown(ctx: &Ctx, e: Endpoint) -> anyhow::Result<AdminEndpointOut> {
    let mut backlogs = store::admin::backlogs(&ctx.db, std::slice::from_ref(&e.id)).await?;
    let b = backlogs.remove(&e.id).unwrap_or_default();
    Ok(AdminEndpointOut::of(e, b))
}

/// `hookd endpoint get`: the endpoint as GET /v1/admin/endpoints/{id}
/// answers, with its circuit and last error.
pub async fn get(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    let shown = admin_endpoint_detail::of(&ctx.db, e, ctx.now()).await?;
    out::emit(json, &shown, || detail_text(&shown))
}

/// The detail for a person: the endpoint, then how its deliveries go.
pub fn detail_text(d: &AdminEndpointDetail) -> String {
    let c = &d.circuit;
    let state = serde_json::to_value(c.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let circuit = match (&c.open_until, c.consecutive_failures) {
        (Some(until), n) => format!("{state} until {until} ({n} failures in a row)"),
        (None, 0) => state,
        (None, n) => format!("{state} ({n} failures in a row)"),
    };
    let last = d.last_error.as_ref().map(|l| {
        let status = l.status_code.map(|s| format!(" {s}")).unwrap_or_default();
        let detail = l
            .error_detail
            .as_deref()
            .map(|t| format!(": {t}"))
            .unwrap_or_default();
        format!(
            "{} {}{status}{detail} (delivery {})",
            l.at, l.error_category, l.delivery_id
        )
    });
    text_with(
        &d.endpoint,
        &[
            ("circuit", Some(circuit)),
            ("last error", Some(last.unwrap_or_else(|| "none".into()))),
        ],
    )
}

/// An endpoint for a person.
pub fn text(a: &AdminEndpointOut) -> String {
    text_with(a, &[])
}

/// An endpoint for a person, with `more` after its settings.
fn text_with(a: &AdminEndpointOut, more: &[(&str, Option<String>)]) -> String {
    let e = &a.endpoint;
    let types = if e.event_types.is_empty() {
        "every type".to_string()
    } else {
        e.event_types.join(", ")
    };
    let mut pairs = vec![
        ("id", Some(e.id.clone())),
        ("partner", Some(a.partner_id.clone())),
        ("kind", Some(a.kind.clone())),
        ("url", Some(e.url.clone())),
        ("status", Some(e.status.clone())),
        ("disabled reason", e.disabled_reason.clone()),
        ("failing since", e.failing_since.clone()),
        ("event types", Some(types)),
        ("schema version", e.schema_version.clone()),
        ("ordering", Some(e.ordering.clone())),
        ("on dead", Some(e.ordering_on_dead.clone())),
        (
            "filter",
            Some(e.filter.as_ref().map_or("none".into(), |f| f.to_string())),
        ),
        ("concurrency", Some(e.concurrency.to_string())),
        (
            "rate limit",
            Some(e.rate_limit.map_or("none".into(), |r| format!("{r}/s"))),
        ),
        (
            "description",
            (!e.description.is_empty()).then(|| e.description.clone()),
        ),
        ("waiting", Some(a.backlog.waiting.to_string())),
        ("paused", Some(a.backlog.paused.to_string())),
        ("created", Some(e.created_at.clone())),
        ("updated", Some(e.updated_at.clone())),
    ];
    pairs.extend(more.iter().cloned());
    let mut text = out::fields(&pairs);
    text.push_str(&format!(
        "\ndeliveries: hookd delivery list --endpoint {}",
        e.id
    ));
    text
}

/// `hookd endpoint held`: the endpoint's held subjects, as
/// GET /v1/admin/endpoints/{id}/held-subjects answers (at most 500).
pub async fn held(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    let rows = store::ordering::held(&ctx.db, &e.id, 500).await?;
    let shown = HeldSubjects::of(e, rows);
    out::emit(json, &shown, || {
        let head = format!(
            "endpoint {}: ordering {}, a dead head: {}",
            shown.endpoint_id, shown.ordering, shown.ordering_on_dead
        );
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|h| {
                vec![
                    format!("{}/{}", h.subject.subject_type, h.subject.id),
                    h.held_by.clone(),
                    h.head.delivery_id.clone(),
                    h.head.state.clone(),
                    h.head.attempt_count.to_string(),
                    h.waiting.to_string(),
                    h.since.clone(),
                ]
            })
            .collect();
        let table = out::table(
            &[
                "SUBJECT", "HELD BY", "HEAD", "STATE", "ATTEMPTS", "WAITING", "SINCE",
            ],
            &rows,
        );
        let hint = if shown.data.iter().any(|h| h.held_by == "dead_head") {
            "\n\na dead head holds its subject until it is replayed (hookd delivery replay HEAD) \
             or skipped (hookd delivery skip HEAD)"
        } else {
            ""
        };
        format!("{head}\n\n{table}{hint}")
    })
}
