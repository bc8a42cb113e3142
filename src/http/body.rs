//! Request bodies and queries, parsed into typed values with an error that
//! names the field and says which kind of wrong it is. A body is read only
//! after the caller is authenticated, only if it is JSON, only up to a
//! limit and only within `http.body_timeout`.

use std::time::Duration;

use actix_web::{HttpRequest, http::header, web};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::problem::Problem;
use crate::domain::strict_json::{self, StrictError};

/// Largest body of any route but `POST /v1/events` (an endpoint, a partner).
pub const API_BODY_LIMIT: usize = 64 * 1024;

/// Whether the request says it has a body.
fn has_body(req: &HttpRequest) -> bool {
    let headers = req.headers();
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// A body must say it is `application/json`; no body needs no type.
pub fn require_json(req: &HttpRequest) -> Result<(), Problem> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("(not text)"));
    match content_type {
        None if !has_body(req) => Ok(()),
        Some(ct)
            if ct
                .split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")) =>
        {
            Ok(())
        }
        other => Err(Problem::unsupported_media_type(format!(
            "send the body as application/json, not {}",
            other.unwrap_or("a body without Content-Type")
        ))),
    }
}

/// Reads the body of an authenticated request: JSON only (415), at most
/// `limit` bytes (413, at once when `Content-Length` says so), and all of it
/// within `timeout` (408).
pub async fn read(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
    timeout: Duration,
) -> Result<web::BytesMut, Problem> {
    require_json(req)?;
    read_bytes(req, payload, limit, timeout).await
}

/// Reads a body of any type: at most `limit` bytes, within `timeout`.
pub async fn read_bytes(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
    timeout: Duration,
) -> Result<web::BytesMut, Problem> {
    let too_large = || {
        Problem::too_large(
            None,
            format!("the request body is larger than {limit} bytes"),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let mut body = web::BytesMut::new();
    loop {
        let chunk = match tokio::time::timeout_at(deadline, payload.next()).await {
            Err(_) => return Err(Problem::body_timeout(timeout)),
            Ok(None) => break,
            Ok(Some(chunk)) => chunk
                .map_err(|e| Problem::malformed_json(format!("reading the request body: {e}")))?,
        };
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads and parses the JSON body of an authenticated request.
pub async fn read_json<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    timeout: Duration,
) -> Result<T, Problem> {
    let body = read(req, payload, API_BODY_LIMIT, timeout).await?;
    json(&body)
}

/// Refuses what is not exactly one JSON value, or repeats a key.
pub fn strict(body: &[u8]) -> Result<(), Problem> {
    strict_json::check(body).map_err(|e| match e {
        StrictError::Syntax(e) => Problem::malformed_json(format!("the body is not JSON: {e}")),
        StrictError::DuplicateKey(path) => Problem::duplicate_key(path),
    })
}

/// Parses a JSON body. Syntax errors and repeated keys are 400; unknown
/// fields, wrong types, missing fields and text with control characters are
/// 422 with the field's path.
pub fn json<T: DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        body
    };
    // The whole body must be one JSON value (no trailing bytes, no repeated
    // key) before any field is looked at.
    strict(body)?;
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| Problem::malformed_json(format!("the body is not JSON: {e}")))?;
    if let Some(field) = strict_json::control_character_at(&value) {
        return Err(Problem::invalid(
            field.clone(),
            format!("{field} contains a control character"),
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = inner.to_string();
        if let Some(rest) = message.strip_prefix("unknown field `") {
            let name = rest.split('`').next().unwrap_or_default();
            // The path already ends at the unknown field.
            let field = if path == "." { name.to_string() } else { path };
            return Problem::unknown_field(field, message);
        }
        let field = if path == "." {
            missing_field(&message).unwrap_or_default()
        } else {
            path
        };
        if message.starts_with("missing field") {
            Problem::invalid(field, message)
        } else if message.starts_with("invalid value") || message.contains("out of range") {
            Problem::out_of_range(field, message)
        } else {
            Problem::invalid_type(field, message)
        }
    })
}

fn missing_field(message: &str) -> Option<String> {
    message
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
        .map(str::to_string)
}

/// Parses a query string; unknown parameters and bad values are 400.
pub fn query<T: DeserializeOwned>(query: &str) -> Result<T, Problem> {
    serde_urlencoded::from_str(query)
        .map_err(|e| Problem::invalid_query(format!("the query is invalid: {e}")))
}

/// An RFC 3339 time as Unix milliseconds.
pub fn time(field: &str, text: &str) -> Result<i64, Problem> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|_| {
            Problem::invalid_type(
                field,
                format!("{field} must be an RFC 3339 time like 2026-10-15T14:22:31Z"),
            )
        })
}

/// An optional RFC 3339 time as Unix milliseconds.
pub fn optional_time(field: &str, text: Option<&str>) -> Result<Option<i64>, Problem> {
    text.map(|t| time(field, t)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        url: String,
        concurrency: Option<u32>,
    }

    #[test]
    fn each_kind_of_wrong_gets_its_own_problem() {
        let kind = |body: &str| json::<Body>(body.as_bytes()).expect_err("invalid").kind;
        assert!(kind("{not json").ends_with("/malformed-json"));
        assert!(kind(r#"{"url": "x", "colour": 1}"#).ends_with("/unknown-field"));
        assert!(kind(r#"{"url": 5}"#).ends_with("/invalid-type"));
        assert!(
            kind(r#"{"url": "x", "concurrency": -1}"#).ends_with("/invalid-type")
                || kind(r#"{"url": "x", "concurrency": -1}"#).ends_with("/out-of-range")
        );
        assert!(kind(r#"{}"#).ends_with("/validation"));
    }

    #[test]
    fn a_repeated_key_is_refused_and_named() {
        let p = json::<Body>(br#"{"url": "a", "url": "b"}"#).expect_err("repeated");
        assert!(p.kind.ends_with("/duplicate-key"), "{}", p.kind);
        assert_eq!(p.status, 400);
        assert_eq!(p.field.as_deref(), Some("url"));
    }

    #[test]
    fn text_with_a_control_character_is_refused() {
        let p = json::<Body>(br#"{"url": "x\u001b[31m"}"#).expect_err("escape code");
        assert_eq!(p.status, 422);
        assert_eq!(p.field.as_deref(), Some("url"));
    }

    #[test]
    fn the_offending_field_is_named() {
        let p = json::<Body>(br#"{"url": "x", "colour": 1}"#).expect_err("invalid");
        assert_eq!(p.field.as_deref(), Some("colour"));
        let p = json::<Body>(br#"{"url": 5}"#).expect_err("invalid");
        assert_eq!(p.field.as_deref(), Some("url"));
        let p = json::<Body>(br#"{}"#).expect_err("invalid");
        assert_eq!(p.field.as_deref(), Some("url"));
    }
}
