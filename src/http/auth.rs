//! Bearer API keys: which principal is calling, whether its role may, and
//! whether it is within its rate limit. An unknown, malformed or revoked key
//! is a 401 that says no more than that.

use std::time::Instant;

use actix_web::HttpRequest;

use super::{AppState, problem::Problem};
use crate::store::keys::{self, Principal, Role};

fn bearer(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The caller, if its key is valid, has `role` and is within its rate limit.
pub async fn require(
    req: &HttpRequest,
    state: &AppState,
    role: Role,
) -> Result<Principal, Problem> {
    let token = bearer(req).ok_or_else(Problem::unauthorized)?;
    let principal = keys::authenticate(&state.shared.db, token)
        .await?
        .ok_or_else(Problem::unauthorized)?;
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
        .take(&principal.key_id, Instant::now())
        .map_err(|wait| Problem::too_many_requests(wait.as_secs().max(1)))?;
    Ok(principal)
}

/// The partner a partner key belongs to.
pub async fn partner(req: &HttpRequest, state: &AppState) -> Result<String, Problem> {
    let principal = require(req, state, Role::Partner).await?;
    principal
        .partner_id
        .ok_or_else(|| Problem::internal(&"a partner key without a partner"))
}

pub async fn operator(req: &HttpRequest, state: &AppState) -> Result<(), Problem> {
    require(req, state, Role::Operator).await.map(|_| ())
}
