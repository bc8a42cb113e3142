//! `hookd endpoint rotate-secret` and `expire-previous`: an endpoint's
//! signing secret rotated, and the overlap ended, as the Partner API does
//! it (`endpoint_acts`), on the partner's behalf; audited `via: cli`.

use clap::ValueEnum;
use serde_json::json;

use super::{ctx::Ctx, endpoint_view::find, exit::from_problem, out::emit};
use crate::{
    http::partner::{
        endpoint_acts,
        endpoint_shapes::{KeyShown, PreviousExpired, RotateSecret, SecretRotated},
        time,
    },
    store::audit::Action,
};

/// The new key's scheme.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum NewScheme {
    /// HMAC with a shared secret.
    V1,
    /// Ed25519: receivers verify with a public key.
    V1a,
}

impl NewScheme {
    fn as_str(self) -> &'static str {
        match self {
            NewScheme::V1 => "v1",
            NewScheme::V1a => "v1a",
        }
    }
}

/// `hookd endpoint rotate-secret`: a new secret (printed this once); the
/// previous ones keep signing for `overlap` seconds.
pub async fn rotate(
    ctx: &Ctx,
    id: &str,
    overlap: Option<u64>,
    scheme: Option<NewScheme>,
    json: bool,
) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    // Read as the API reads its body: the same fields, the same defaults.
    let input: RotateSecret = serde_json::from_value(json!({
        "overlap_seconds": overlap,
        "scheme": scheme.map(NewScheme::as_str),
    }))?;
    let secrets = ctx.secrets()?;
    let (key, until) = endpoint_acts::rotate(
        &ctx.db,
        &secrets,
        &ctx.config.api,
        (&e.partner_id, &e.id),
        &input,
        ctx.now(),
    )
    .await
    .map_err(from_problem)?;
    ctx.announce(&e.id).await;
    let shown = SecretRotated {
        key: KeyShown::of(&key),
        previous_expires_at: time(until),
    };
    let detail = json!({
        "overlap_seconds": input.overlap_seconds.unwrap_or(86_400),
        "scheme": scheme.map_or("v1", NewScheme::as_str),
        "previous_expires_at": shown.previous_expires_at,
    });
    ctx.audit(
        Action::EndpointSecretRotate,
        &e.id,
        Some(&e.partner_id),
        detail,
    )
    .await?;
    emit(json, &shown, || {
        let new = match (&shown.key.secret, &shown.key.public_key) {
            (Some(secret), _) => format!("new signing secret (shown this once): {secret}"),
            (None, public) => format!(
                "new v1a public key (receivers verify with it): {}",
                public.as_deref().unwrap_or_default()
            ),
        };
        format!(
            "rotated the secret of endpoint {id}\n{new}\nthe previous secret also signs until {} \
             (end it now: hookd endpoint expire-previous {id})",
            shown.previous_expires_at
        )
    })
}

/// `hookd endpoint expire-previous`: only the newest secret signs from now.
pub async fn expire_previous(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let e = find(ctx, id).await?;
    let expired = endpoint_acts::expire_previous(&ctx.db, (&e.partner_id, &e.id), ctx.now())
        .await
        .map_err(from_problem)?;
    ctx.announce(&e.id).await;
    ctx.audit(
        Action::EndpointSecretExpire,
        &e.id,
        Some(&e.partner_id),
        json!({"expired": expired}),
    )
    .await?;
    let shown = PreviousExpired { expired };
    emit(json, &shown, || {
        format!(
            "endpoint {id}: {expired} previous secret(s) stopped signing; only the newest signs"
        )
    })
}
