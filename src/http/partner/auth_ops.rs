//! What setting an endpoint's receiver credentials checks and does, once
//! for every door: the Partner API (`receiver_auth`), the portal, and (the
//! pure checks) the command line. A check names the field it refuses.

use super::{
    auth_shapes::{AuthPart, ReceiverAuthOut, SetOAuth2},
    endpoint_ops as ops,
};
use crate::{
    delivery::{client::Trust, messages::EndpointChanged},
    domain::{client_cert, receiver_auth::check_headers},
    http::{AppState, problem::Problem},
    store::{
        endpoints::public_keys,
        receiver_auth::{Change, OAuth2Client, Shown},
        scoped::for_partner,
    },
};

/// Static headers as given (name, value): checked, names lower-cased.
pub fn checked_headers(given: &[(String, String)]) -> Result<Vec<(String, String)>, Problem> {
    check_headers(given).map_err(|e| Problem::invalid("headers", e.to_string()))
}

/// Text on one line, of at most `max` bytes.
fn one_line(field: &str, value: &str, max: usize) -> Result<(), Problem> {
    if value.trim().is_empty() || value.len() > max || value.chars().any(char::is_control) {
        return Err(Problem::invalid(
            field,
            format!("{field} must be 1 to {max} bytes on one line"),
        ));
    }
    Ok(())
}

/// OAuth2 client credentials from `input`, its token URL already judged
/// (`checked_token_url`) as `token_url`.
pub fn oauth2_client(token_url: String, input: SetOAuth2) -> Result<OAuth2Client, Problem> {
    for (field, value, max) in [
        ("client_id", Some(&input.client_id), 256),
        ("client_secret", Some(&input.client_secret), 1024),
        ("scope", input.scope.as_ref(), 1024),
        ("audience", input.audience.as_ref(), 1024),
    ] {
        if let Some(v) = value {
            one_line(field, v, max)?;
        }
    }
    Ok(OAuth2Client {
        token_url,
        client_id: input.client_id,
        client_secret: input.client_secret,
        scope: input.scope,
        audience: input.audience,
    })
}

/// A client certificate and its key as stored: (chain PEM, key PEM,
/// subject, expiry in ms).
pub struct CheckedCert {
    pub certificate: String,
    pub private_key: String,
    pub subject: String,
    pub not_after_ms: i64,
}

impl CheckedCert {
    pub fn change(&self) -> Change<'_> {
        Change::ClientCert(Some((
            &self.certificate,
            &self.private_key,
            &self.subject,
            self.not_after_ms,
        )))
    }
}

/// A chain (the endpoint's certificate first) and its key, refused unless
/// the certificate is current at `now_ms` and the key matches it and is
/// one rustls can sign with under `trust`.
pub fn checked_certificate(
    trust: &Trust,
    certificate: String,
    private_key: String,
    now_ms: i64,
) -> Result<CheckedCert, Problem> {
    let cert = client_cert::read(&certificate, &private_key, now_ms)
        .map_err(|e| Problem::invalid("certificate", e.to_string()))?;
    let summary = cert.summary.clone();
    trust.with_client_cert(cert.chain, cert.key).map_err(|e| {
        Problem::invalid(
            "private_key",
            format!("the key cannot be used with the certificate: {e}"),
        )
    })?;
    Ok(CheckedCert {
        certificate,
        private_key,
        subject: summary.subject,
        not_after_ms: summary.not_after_ms,
    })
}

/// The removal of one kind of credential.
pub fn removal(part: AuthPart) -> Change<'static> {
    match part {
        AuthPart::Headers => Change::Headers(None),
        AuthPart::Oauth2 => Change::OAuth2(None),
        AuthPart::ClientCertificate => Change::ClientCert(None),
    }
}

/// The token URL of `input`, held to the rules of a callback URL.
pub async fn checked_token_url(state: &AppState, url: &str) -> Result<String, Problem> {
    ops::checked_url(state, url)
        .await
        .map_err(|p| p.with_field("token_url"))
}

/// Applies `change` to the partner's endpoint `id` (not a notification
/// endpoint), tells its owner, and answers what is now set.
pub async fn change(
    state: &AppState,
    partner: &str,
    id: &str,
    change: Change<'_>,
) -> Result<ReceiverAuthOut, Problem> {
    ops::changeable(state, partner, id).await?;
    let now = state.shared.clock.now_ms();
    let shown = for_partner(&state.shared.db, partner)
        .change_receiver_auth(&state.shared.secrets, id, change, now)
        .await?
        .ok_or_else(ops::not_found)?;
    state.engine.fanout.do_send(EndpointChanged(id.to_string()));
    answer(state, id, shown).await
}

/// What the partner's endpoint `id` presents, redacted, with its public keys.
pub async fn shown(state: &AppState, partner: &str, id: &str) -> Result<ReceiverAuthOut, Problem> {
    let shown = for_partner(&state.shared.db, partner)
        .receiver_auth(id)
        .await?
        .ok_or_else(ops::not_found)?;
    answer(state, id, shown).await
}

async fn answer(state: &AppState, id: &str, shown: Shown) -> Result<ReceiverAuthOut, Problem> {
    let keys = public_keys(&state.shared.db, id, state.shared.clock.now_ms()).await?;
    Ok(ReceiverAuthOut::new(shown, keys))
}
