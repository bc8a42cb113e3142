//! `hookd partner portal-link`: a one-time sign-in link into a partner's
//! portal, minted as POST /v1/admin/partners/{id}/portal-links mints it;
//! audited `via: cli`.

use serde_json::json;

use super::{
    ctx::Ctx,
    exit::{self, from_problem},
    out::emit,
};
use crate::{
    config::{HttpConfig, Origin},
    http::{
        admin_portal::{self, PortalLink},
        partner::time,
    },
    store::audit::Action,
};

/// Where the partner opens the link: `--base-url`, else `http.public_url`,
/// else the address hookd listens on (any address read as this machine's).
pub fn base(given: Option<&str>, http: &HttpConfig) -> anyhow::Result<String> {
    if let Some(text) = given {
        return Origin::parse(text)
            .map(|o| o.as_str().to_string())
            .ok_or_else(|| exit::usage(format!("--base-url: `{text}` is not an http(s) origin")));
    }
    if let Some(public) = &http.public_url {
        return Ok(public.as_str().to_string());
    }
    let mut listen = http.listen;
    if listen.ip().is_unspecified() {
        listen.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    Ok(format!("http://{listen}"))
}

pub async fn create(
    ctx: &Ctx,
    partner: &str,
    base_url: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    let base = base(base_url, &ctx.config.http)?;
    let (minted, expires) = admin_portal::mint(&ctx.db, partner, "cli", ctx.now())
        .await
        .map_err(from_problem)?;
    ctx.audit(
        Action::PortalLinkCreate,
        &minted.id,
        Some(partner),
        json!({"expires_at": time(expires)}),
    )
    .await?;
    let shown = PortalLink::of(&base, minted, expires);
    emit(json, &shown, || {
        format!(
            "a one-time sign-in link to partner {partner}'s portal (works once, until {}):\n{}",
            shown.expires_at, shown.url
        )
    })
}
