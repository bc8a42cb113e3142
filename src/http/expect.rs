//! `Expect: 100-continue`: a client that asks waits for `100 Continue`
//! before it sends its body, so the key is checked first. A request to the
//! API that may carry a body (any method but GET and HEAD under `/v1/`) with
//! no valid key gets its 401 (or 429, past the address's budget) instead of
//! the 100, and never sends the body. A valid key of the wrong role hears
//! 100 and gets its 403 from the route, which checks again; the dashboard's
//! and the portal's forms hear 100 at once, as before.

use actix_http::{Method, Request, Response, body::BoxBody};
use actix_web::ResponseError as _;

use super::{AppState, auth};

/// Whether a request with this method and path must show a valid key before
/// it hears `100 Continue`.
pub fn needs_key(method: &Method, path: &str) -> bool {
    path.starts_with("/v1/") && !matches!(*method, Method::GET | Method::HEAD)
}

/// The expect check: the request back if it may send its body, the answer
/// that refuses it if not.
pub async fn check(state: AppState, req: Request) -> Result<Request, Response<BoxBody>> {
    if !needs_key(req.method(), req.path()) {
        return Ok(req);
    }
    match auth::authenticated(req.head(), &state).await {
        Ok(_) => Ok(req),
        Err(problem) => Err(problem.error_response().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apis_writes_need_a_key_before_their_body_and_nothing_else_does() {
        assert!(needs_key(&Method::POST, "/v1/events"));
        assert!(needs_key(&Method::PATCH, "/v1/endpoints/ep_1"));
        assert!(needs_key(&Method::DELETE, "/v1/endpoints/ep_1"));
        assert!(!needs_key(&Method::GET, "/v1/openapi.json"));
        assert!(!needs_key(&Method::POST, "/dashboard/login"));
        assert!(!needs_key(&Method::POST, "/portal/endpoints"));
    }
}
