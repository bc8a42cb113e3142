//! The one way a test reads an HTTP answer from hookd: status, JSON body
//! (`Null` when the body is not JSON) and headers.

use awc::http::header::HeaderMap;
use serde_json::Value;

/// An API answer: status, JSON body (`Null` when the body is not JSON) and headers.
pub type ApiAnswer = (u16, Value, HeaderMap);

/// The body of `answer`, which must have `status`.
#[track_caller]
pub fn expect_status(answer: &ApiAnswer, status: u16) -> Value {
    assert_eq!(
        answer.0, status,
        "expected a {status}, got {}: {}",
        answer.0, answer.1
    );
    answer.1.clone()
}

/// The largest body a test reads (a feed page or a large export).
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// Reads `res` to its end.
pub async fn read_answer<S: Body>(res: awc::ClientResponse<S>) -> ApiAnswer {
    try_read_answer(res).await.unwrap_or_else(|e| panic!("{e}"))
}

/// Like `read_answer`, saying why the body could not be read (for tests
/// that drive hookd past its limits, where that may happen).
pub async fn try_read_answer<S: Body>(
    mut res: awc::ClientResponse<S>,
) -> Result<ApiAnswer, String> {
    let bytes = res
        .body()
        .limit(BODY_LIMIT)
        .await
        .map_err(|e| format!("the body of a {} answer: {e}", res.status()))?;
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok((res.status().as_u16(), value, res.headers().clone()))
}

/// An answer read as text (a page, a scrape, JSON kept byte for byte):
/// status, body and headers.
pub type TextAnswer = (u16, String, HeaderMap);

/// Reads `res` to its end as text, for bodies a test reads as written
/// rather than as parsed JSON.
pub async fn read_text<S: Body>(mut res: awc::ClientResponse<S>) -> TextAnswer {
    let bytes = res
        .body()
        .limit(BODY_LIMIT)
        .await
        .unwrap_or_else(|e| panic!("the body of a {} answer: {e}", res.status()));
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (res.status().as_u16(), text, res.headers().clone())
}

/// What awc gives as a response body.
pub trait Body:
    futures_util::Stream<Item = Result<actix_web::web::Bytes, awc::error::PayloadError>> + Unpin
{
}

impl<S> Body for S where
    S: futures_util::Stream<Item = Result<actix_web::web::Bytes, awc::error::PayloadError>> + Unpin
{
}

/// A header of an answer, as text.
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The `field` of each item of a list answer's `data`, in order (items
/// without it left out); panics when `data` is not a list.
pub fn listed<'a>(list: &'a Value, field: &str) -> Vec<&'a str> {
    list["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list answer: {list}"))
        .iter()
        .filter_map(|item| item[field].as_str())
        .collect()
}
