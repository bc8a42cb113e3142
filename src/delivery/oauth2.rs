//! OAuth2 client credentials for receivers behind an API gateway: one token
//! per token lifetime for all of an endpoint's attempts (concurrent attempts
//! wait for the one request in flight), a fresh one once when the receiver
//! answers 401, and the token request held to the same egress policy as a
//! delivery (its URL checked, its host resolved and pinned by the resolver).

use std::{cell::RefCell, rc::Rc, sync::Arc};

use actix::Addr;
use base64::Engine as _;
use futures_util::future::{FutureExt as _, LocalBoxFuture, Shared as SharedFuture};
use serde::Deserialize;

use super::{
    Shared,
    client::{self, PinnedClient},
};
use crate::{
    domain::receiver_auth::token_usable_until,
    egress::{
        resolver::{Resolve, ResolverActor},
        url_check::check_url,
    },
    store::receiver_auth::OAuth2Client,
};

#[derive(Clone)]
struct Token {
    value: String,
    usable_until: i64,
}

type Fetch = SharedFuture<LocalBoxFuture<'static, Result<Token, String>>>;

/// An endpoint's tokens, kept by its actor across settings reloads.
#[derive(Default)]
pub struct Tokens {
    /// The credentials the token below is for.
    client: Option<OAuth2Client>,
    current: Option<Token>,
    pending: Option<Fetch>,
    /// Token requests made, for the operator (and the tests).
    pub fetched: u64,
}

pub type TokenSlot = Rc<RefCell<Tokens>>;

/// A bearer token for `client`: the cached one while it is usable, else
/// the one being fetched, else a new fetch. `stale` names a token the
/// receiver just refused; it is not handed out again.
pub async fn bearer(
    shared: &Arc<Shared>,
    resolver: &Addr<ResolverActor>,
    slot: &TokenSlot,
    client: &OAuth2Client,
    stale: Option<&str>,
) -> Result<String, String> {
    let fetch = {
        let mut tokens = slot.borrow_mut();
        if tokens.client.as_ref() != Some(client) {
            *tokens = Tokens {
                client: Some(client.clone()),
                fetched: tokens.fetched,
                ..Tokens::default()
            };
        }
        let now = shared.clock.now_ms();
        if let Some(t) = &tokens.current
            && now < t.usable_until
            && stale != Some(t.value.as_str())
        {
            return Ok(t.value.clone());
        }
        tokens.current = None;
        match &tokens.pending {
            Some(f) => f.clone(),
            None => {
                tokens.fetched += 1;
                let f = fetch(shared.clone(), resolver.clone(), client.clone())
                    .boxed_local()
                    .shared();
                tokens.pending = Some(f.clone());
                f
            }
        }
    };
    let result = fetch.await;
    let mut tokens = slot.borrow_mut();
    tokens.pending = None;
    if let Ok(t) = &result
        && tokens.client.as_ref() == Some(client)
    {
        tokens.current = Some(t.clone());
    }
    result.map(|t| t.value)
}

#[derive(Deserialize)]
struct Answer {
    access_token: String,
    expires_in: Option<u64>,
}

#[derive(Deserialize)]
struct Refusal {
    error: String,
    error_description: Option<String>,
}

/// One token request (RFC 6749 §4.4): the client authenticates with HTTP
/// Basic, the grant and its scope and audience go in the form body.
async fn fetch(
    shared: Arc<Shared>,
    resolver: Addr<ResolverActor>,
    c: OAuth2Client,
) -> Result<Token, String> {
    let url =
        check_url(&c.token_url, &shared.rules).map_err(|e| format!("the OAuth2 token URL {e}"))?;
    let addrs = match resolver.send(Resolve(url.host.clone())).await {
        Ok(Ok(resolved)) => resolved.addrs,
        Ok(Err(e)) => return Err(format!("the OAuth2 token URL: {e}")),
        Err(e) => return Err(format!("the OAuth2 token URL: {e}")),
    };
    let pinned = PinnedClient::new(addrs, shared.tls.clone(), &shared.limits, &shared.route, 1);
    let mut form = vec![("grant_type", "client_credentials")];
    form.extend(c.scope.as_deref().map(|s| ("scope", s)));
    form.extend(c.audience.as_deref().map(|a| ("audience", a)));
    let body = serde_urlencoded::to_string(&form).map_err(|e| e.to_string())?;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        form_encode(&c.client_id),
        form_encode(&c.client_secret)
    ));
    let headers = [
        (
            "content-type",
            "application/x-www-form-urlencoded".to_string(),
        ),
        ("accept", "application/json".to_string()),
        ("authorization", format!("Basic {basic}")),
        (
            "user-agent",
            concat!("hookd/", env!("CARGO_PKG_VERSION")).to_string(),
        ),
    ];
    let request = client::Request {
        url: &url.url,
        port: url.port,
        headers: &headers,
        extra_headers: &[],
        body: body.into(),
    };
    let now = shared.clock.now();
    let observed = client::send(&pinned, request, &shared.limits, now).await;
    let fetched_at = shared.clock.now_ms();
    match observed.status {
        Some(200..=299) => {
            let answer: Answer = serde_json::from_slice(&observed.body).map_err(|e| {
                format!("the OAuth2 token endpoint's answer is not a token response: {e}")
            })?;
            Ok(Token {
                value: answer.access_token,
                usable_until: token_usable_until(fetched_at, answer.expires_in),
            })
        }
        Some(status) => Err(match serde_json::from_slice::<Refusal>(&observed.body) {
            Ok(r) => format!(
                "the OAuth2 token endpoint answered {status}: {}{}",
                r.error,
                r.error_description
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default()
            ),
            Err(_) => format!("the OAuth2 token endpoint answered {status}"),
        }),
        None => Err(format!(
            "the OAuth2 token endpoint: {}",
            observed.detail.unwrap_or_default()
        )),
    }
}

/// `application/x-www-form-urlencoded` of one value, as RFC 6749 §2.3.1
/// asks for the client id and secret before they are joined for Basic.
fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::form_encode;

    #[test]
    fn a_client_secret_is_form_encoded_before_it_goes_into_basic() {
        assert_eq!(form_encode("a b:c/d+é"), "a+b%3Ac%2Fd%2B%C3%A9");
    }
}
