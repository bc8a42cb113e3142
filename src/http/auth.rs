//! Bearer API keys: which principal is calling, and whether its role may.
//! An unknown, malformed or revoked key is a 401 that says no more than that.

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

/// The caller, if its key is valid and has `role`.
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
            "this route needs a {} key",
            role.as_str()
        )));
    }
    Ok(principal)
}
