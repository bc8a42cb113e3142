//! One endpoint as the endpoint commands show it: found among every
//! partner's, with its backlog read now, as the operator API answers it, and
//! as text for a person.

use super::{ctx::Ctx, exit, out};
use crate::{
    http::admin_endpoints::AdminEndpointOut,
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

/// An endpoint for a person.
pub fn text(a: &AdminEndpointOut) -> String {
    let e = &a.endpoint;
    let types = if e.event_types.is_empty() {
        "every type".to_string()
    } else {
        e.event_types.join(", ")
    };
    let mut text = out::fields(&[
        ("id", Some(e.id.clone())),
        ("partner", Some(a.partner_id.clone())),
        ("kind", Some(a.kind.clone())),
        ("url", Some(e.url.clone())),
        ("status", Some(e.status.clone())),
        ("disabled reason", e.disabled_reason.clone()),
        ("failing since", e.failing_since.clone()),
        ("event types", Some(types)),
        ("schema version", e.schema_version.clone()),
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
    ]);
    text.push_str(&format!(
        "\ndeliveries: hookd delivery list --endpoint {}",
        e.id
    ));
    text
}
