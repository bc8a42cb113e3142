//! Bearer API keys: which principal is calling, whether its role may, and
//! whether it is within its rate limit. An unknown, malformed or revoked key
//! is a 401 that says no more than that. Everything here reads headers only:
//! no route reads a body before its caller is known.
//!
//! Requests without a valid key are throttled per client address; once an
//! address is over its budget it gets 429 before any database look-up,
//! unless the key it presents is one of the unrevoked keys this process
//! knows (`known_keys`): strangers on the same address never lock out a
//! valid key. Only failures spend the budget.
//!
//! The check of the key alone (`authenticated`) reads only the request head,
//! so it can also run before a `100 Continue` is sent (`http::expect`). A
//! key found valid lately is answered from memory (`known_keys`).

use actix_web::{HttpRequest, dev::RequestHead};

use super::{AppState, client_ip, problem::Problem, rate_limit::retry_after};
use crate::store::keys::{Principal, Role};

fn bearer(head: &RequestHead) -> Option<&str> {
    let value = head.headers.get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The per-address budget's key for this request.
fn address_key(head: &RequestHead, state: &AppState) -> String {
    client_ip::of(head, &state.shared.config.http.trust_proxy)
        .map_or_else(|| "unknown".to_string(), client_ip::budget_key)
}

/// A refusal that counts against the client address: 401 while the address
/// is within its budget, 429 past it.
pub fn refuse_anonymous(req: &HttpRequest, state: &AppState, refusal: Problem) -> Problem {
    refuse_from(req.head(), state, refusal)
}

fn refuse_from(head: &RequestHead, state: &AppState, refusal: Problem) -> Problem {
    let key = address_key(head, state);
    match state.anonymous_limiter.take(&key) {
        Ok(()) => refusal,
        Err(wait) => Problem::too_many_failures(retry_after(wait)),
    }
}

/// 429 if the client address has spent its budget of failed requests.
pub fn within_anonymous_budget(req: &HttpRequest, state: &AppState) -> Result<(), Problem> {
    within_budget(req.head(), state)
}

fn within_budget(head: &RequestHead, state: &AppState) -> Result<(), Problem> {
    let key = address_key(head, state);
    match state.anonymous_limiter.empty_for(&key) {
        None => Ok(()),
        Some(wait) => Err(Problem::too_many_failures(retry_after(wait))),
    }
}

/// Like `within_budget`, but a request whose `token` is a known key goes on
/// to the database past the budget: the database decides whether it is
/// valid, and a failure there spends the budget as any does.
fn within_budget_or_known(
    head: &RequestHead,
    state: &AppState,
    token: Option<&str>,
) -> Result<(), Problem> {
    within_budget(head, state).or_else(|refusal| {
        if token.is_some_and(|t| state.known_keys.holds(t)) {
            Ok(())
        } else {
            Err(refusal)
        }
    })
}

/// The principal whose key the request head carries, if the key is valid
/// (any role); a refusal that counts against the client address if not.
pub async fn authenticated(head: &RequestHead, state: &AppState) -> Result<Principal, Problem> {
    within_budget_or_known(head, state, bearer(head))?;
    let Some(token) = bearer(head) else {
        return Err(refuse_from(head, state, Problem::unauthorized()));
    };
    match state.known_keys.authenticate(token).await? {
        Some(principal) => Ok(principal),
        None => Err(refuse_from(head, state, Problem::unauthorized())),
    }
}

/// The caller, if its key is valid, has `role` and is within its rate limit.
pub async fn require(
    req: &HttpRequest,
    state: &AppState,
    role: Role,
) -> Result<Principal, Problem> {
    let principal = authenticated(req.head(), state).await?;
    if principal.role != role {
        return Err(Problem::forbidden(format!(
            "this route needs {} {} key",
            if role == Role::Operator { "an" } else { "a" },
            role.as_str()
        )));
    }
    // Producers get their own, larger budget: one runaway producer must not
    // starve the API, but a normal burst of events must not be refused.
    let limiter = if role == Role::Service {
        &state.service_limiter
    } else {
        &state.limiter
    };
    limiter
        .take(&principal.key_id)
        .map_err(|wait| Problem::too_many_requests(retry_after(wait)))?;
    Ok(principal)
}

/// The partner a partner key belongs to.
pub async fn partner(req: &HttpRequest, state: &AppState) -> Result<String, Problem> {
    let principal = require(req, state, Role::Partner).await?;
    principal
        .partner_id
        .ok_or_else(|| Problem::internal(&"a partner key without a partner"))
}

/// The id of the operator key calling (for the audit log).
pub async fn operator(req: &HttpRequest, state: &AppState) -> Result<String, Problem> {
    require(req, state, Role::Operator).await.map(|p| p.key_id)
}
