//! An operator's hand on an endpoint's secrets and a test send: rotate the
//! signing secret, end the rotation overlap, send a `webhook.test` event.
//! Each does exactly what the partner's own request does (the same
//! operations of `partner::endpoint_ops`) and writes the operator's audit
//! entry, never a secret in it.

use serde_json::json;

use super::{
    AppState,
    admin_audit::Actor,
    partner::{endpoint_ops as ops, endpoint_shapes::RotateSecret, time},
    problem::Problem,
};
use crate::{
    signing::SigningKey,
    store::{audit::Action, endpoints::Endpoint},
};

/// A new signing key for any partner's endpoint `e`, as its partner would
/// rotate it; the previous keys sign until the returned time (Unix ms).
/// The audit entry names the scheme and the overlap, never the secret.
pub(crate) async fn rotate_as(
    state: &AppState,
    actor: &Actor,
    e: &Endpoint,
    input: &RotateSecret,
) -> Result<(SigningKey, i64), Problem> {
    let (key, until) = ops::rotate(state, &e.partner_id, &e.id, input).await?;
    let scheme = input.scheme.unwrap_or_default();
    let detail = json!({
        "scheme": crate::signing::Scheme::from(scheme).as_str(),
        "overlap_seconds": input.overlap_seconds.unwrap_or(86_400),
        "previous_expires_at": time(until),
    });
    actor
        .record(
            state,
            Action::EndpointSecretRotate,
            &e.id,
            &e.partner_id,
            detail,
        )
        .await?;
    Ok((key, until))
}

/// Ends the rotation overlap of any partner's endpoint `e` now; returns how
/// many previous keys stopped signing.
pub(crate) async fn expire_previous_as(
    state: &AppState,
    actor: &Actor,
    e: &Endpoint,
) -> Result<u64, Problem> {
    let expired = ops::expire_previous(state, &e.partner_id, &e.id).await?;
    let detail = json!({ "expired": expired });
    actor
        .record(
            state,
            Action::EndpointSecretExpire,
            &e.id,
            &e.partner_id,
            detail,
        )
        .await?;
    Ok(expired)
}

/// Sends a `webhook.test` event to any partner's endpoint `e` only;
/// returns (event id, delivery id).
pub(crate) async fn send_test_as(
    state: &AppState,
    actor: &Actor,
    e: &Endpoint,
) -> Result<(String, String), Problem> {
    let (event_id, delivery_id) = ops::send_test(state, &e.partner_id, &e.id).await?;
    let detail = json!({ "event_id": event_id, "delivery_id": delivery_id });
    actor
        .record(state, Action::EndpointTest, &e.id, &e.partner_id, detail)
        .await?;
    Ok((event_id, delivery_id))
}
