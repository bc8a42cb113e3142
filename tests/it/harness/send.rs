//! Sending an awc request with a body or with none: the one match that the
//! API calls, the isolation walk and the dashboard's form posts share.

use awc::{ClientRequest, SendClientRequest};

use super::{ApiAnswer, read_answer};

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

/// Sends `method path` to `base_url` with `Bearer key` (none when `key` is
/// empty) and, if given, a raw `application/json` body.
pub async fn call_raw(
    http: &awc::Client,
    base_url: &str,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&str>,
) -> ApiAnswer {
    let method = awc::http::Method::from_bytes(method.as_bytes()).expect("an HTTP method");
    let mut req = http.request(method, format!("{base_url}{path}"));
    if !key.is_empty() {
        req = req.insert_header(("authorization", format!("Bearer {key}")));
    }
    let sent = send_with_optional_body(req, "application/json", body).await;
    read_answer(sent.unwrap_or_else(|e| panic!("the request {path} completes: {e}"))).await
}
