//! Sending an awc request with a body or with none: the one match that the
//! API calls, the isolation walk and the dashboard's form posts share.

use awc::{ClientRequest, SendClientRequest};

/// Sends `req` with `body` as `content_type` when there is one, and with no
/// body (and no `content-type`) at all when there is none.
pub fn send_with_optional_body(
    req: ClientRequest,
    content_type: &str,
    body: Option<&str>,
) -> SendClientRequest {
    match body {
        Some(b) => req
            .insert_header(("content-type", content_type))
            .send_body(b.to_string()),
        None => req.send(),
    }
}
