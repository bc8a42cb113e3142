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

/// Like `read_json`, where the top-level text fields named in `multiline`
/// may hold line breaks (PEM).
pub async fn read_json_multiline<T: DeserializeOwned>(
    req: &HttpRequest,
    payload: web::Payload,
    timeout: Duration,
    multiline: &[&str],
) -> Result<T, Problem> {
    let body = read(req, payload, API_BODY_LIMIT, timeout).await?;
    json_multiline(&body, multiline)
}

/// Refuses what is not exactly one JSON value, or repeats a key.
pub fn strict(body: &[u8]) -> Result<(), Problem> {
    strict_json::check(body).map_err(|e| match e {
        StrictError::Syntax(e) => Problem::malformed_json(format!("the body is not JSON: {e}")),
        StrictError::DuplicateKey(path) => Problem::duplicate_key(path),
    })
}

/// A JSON value typed into one field (a portal text box, a command's
/// flag): exactly one value, each key once, or a 422 at `field`.
pub fn json_field(field: &str, text: &str) -> Result<serde_json::Value, Problem> {
    let refused = |why: String| Problem::invalid(field, why);
    strict_json::check(text.as_bytes()).map_err(|e| match e {
        StrictError::Syntax(e) => refused(format!("this is not JSON: {e}")),
        StrictError::DuplicateKey(path) => refused(format!("the key `{path}` appears twice")),
    })?;
    serde_json::from_str(text).map_err(|e| refused(format!("this is not JSON: {e}")))
}

/// Parses a JSON body. Syntax errors and repeated keys are 400; unknown
/// fields, wrong types, missing fields and text with control characters are
/// 422 with the field's path.
pub fn json<T: DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
    json_multiline(body, &[])
}

/// `json`, where the top-level text fields in `multiline` may hold line breaks.
pub fn json_multiline<T: DeserializeOwned>(body: &[u8], multiline: &[&str]) -> Result<T, Problem> {
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
    if let Some(field) = strict_json::control_character_outside(&value, multiline) {
        return Err(Problem::invalid(
            field.clone(),
            format!("{field} contains a control character"),
        ));
    }
    serde_path_to_error::deserialize(value)
        .map_err(|e| refusal(&field_of("", e.path()), &e.into_inner().to_string()))
}

/// `field` (as [`field_of`] spells it) as an RFC 6901 JSON pointer:
/// `events[3].subject.version` is `/events/3/subject/version`.
pub fn pointer(field: &str) -> String {
    let mut out = String::new();
    for part in field.split('.').filter(|p| !p.is_empty()) {
        let (name, indexes) = part.split_once('[').unwrap_or((part, ""));
        if !name.is_empty() {
            out.push('/');
            out.push_str(&name.replace('~', "~0").replace('/', "~1"));
        }
        for index in indexes.split('[') {
            let index = index.trim_end_matches(']');
            if !index.is_empty() {
                out.push('/');
                out.push_str(index);
            }
        }
    }
    out
}

/// Where serde stopped, as `field` names it: `events[3].subject.version`;
/// `prefix` is where the value sits in the request.
pub fn field_of(prefix: &str, path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut field = prefix.to_string();
    for segment in path {
        match segment {
            Segment::Seq { index } => field.push_str(&format!("[{index}]")),
            Segment::Map { key } => join(&mut field, key),
            Segment::Enum { variant } => join(&mut field, variant),
            Segment::Unknown => join(&mut field, "?"),
        }
    }
    field
}

fn join(field: &mut String, name: &str) {
    if !field.is_empty() {
        field.push('.');
    }
    field.push_str(name);
}

/// The problem for a value serde refused at `field` (empty: the whole
/// value), from serde's `message`: unknown field, missing field, out of
/// range (or not among the allowed values), or of the wrong type; all 422.
pub fn refusal(field: &str, message: &str) -> Problem {
    let at = |what: &str| {
        if field.is_empty() {
            what.to_string()
        } else {
            format!("{field}: {what}")
        }
    };
    if let Some(name) = quoted_after(message, "unknown field `") {
        // The path already ends at the unknown field, unless it is at the top.
        let field = if field.is_empty() { name } else { field };
        let detail = if field == name {
            message.to_string()
        } else {
            format!("{field}: {message}")
        };
        return Problem::unknown_field(field, detail);
    }
    if let Some(name) = quoted_after(message, "missing field `") {
        let mut missing = field.to_string();
        join(&mut missing, name);
        return Problem::invalid(missing.clone(), format!("{missing} is required"));
    }
    let range = [
        "invalid value",
        "unknown variant",
        "out of range",
        "too large",
        "too small",
    ];
    if range.iter().any(|r| message.contains(r)) {
        Problem::out_of_range(field, at(message))
    } else {
        Problem::invalid_type(field, at(message))
    }
}

/// The text between `prefix` and the next backtick.
fn quoted_after<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    message
        .strip_prefix(prefix)
        .and_then(|rest| rest.split('`').next())
}

/// Parses a query string. An unknown parameter is 422 `unknown-field`, a
/// value of the wrong type or out of range 422, a parameter given twice 400
/// `duplicate-key`: each with `field`, as in a body.
pub fn query<T: DeserializeOwned>(query: &str) -> Result<T, Problem> {
    let pairs = url::form_urlencoded::parse(query.as_bytes());
    serde_path_to_error::deserialize(serde_urlencoded::Deserializer::new(pairs)).map_err(|e| {
        let field = field_of("", e.path());
        let message = e.into_inner().to_string();
        if let Some(name) = quoted_after(&message, "duplicate field `") {
            return Problem::duplicate_parameter(name.to_string());
        }
        if let Some(name) = quoted_after(&message, "unknown field `") {
            let takes = message.split_once(", expected ").map(|(_, t)| t);
            let detail = match takes {
                Some(takes) => {
                    format!("unknown query parameter `{name}`; this route takes {takes}")
                }
                None => format!("unknown query parameter `{name}`; this route takes none"),
            };
            return Problem::unknown_field(name, detail);
        }
        // Name the value as sent: `limit=ten: invalid digit found in string`.
        let value = url::form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| *k == field)
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let mut p = refusal(&field, &message);
        p.detail = format!("query parameter `{field}={value}`: {message}");
        p
    })
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

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Query {
        limit: Option<i64>,
        state: Option<State>,
        after: Option<String>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum State {
        Pending,
        Dead,
    }

    /// (status, type, field) of the problem for `query`.
    fn query_problem(q: &str) -> (u16, String, Option<String>) {
        let p = query::<Query>(q).expect_err(q);
        let kind = p.kind.rsplit('/').next().unwrap_or_default().to_string();
        (p.status, kind, p.field)
    }

    #[test]
    fn a_query_error_names_its_parameter_with_the_status_of_the_same_error_in_a_body() {
        let cases = [
            ("colour=red", 422, "unknown-field", "colour"),
            ("limit=ten", 422, "invalid-type", "limit"),
            ("limit=", 422, "invalid-type", "limit"),
            ("limit=99999999999999999999", 422, "out-of-range", "limit"),
            ("state=lost", 422, "out-of-range", "state"),
            ("limit=1&limit=2", 400, "duplicate-key", "limit"),
        ];
        for (q, status, kind, field) in cases {
            assert_eq!(
                query_problem(q),
                (status, kind.to_string(), Some(field.to_string())),
                "?{q}"
            );
        }
        let p = query::<Query>("limit=ten").expect_err("not a number");
        assert!(
            p.detail.contains("limit=ten"),
            "the value is shown: {}",
            p.detail
        );
        let p = query::<Query>("colour=red").expect_err("unknown");
        assert!(
            p.detail.contains("`limit`") && p.detail.contains("`after`"),
            "the parameters the route takes are listed: {}",
            p.detail
        );
        assert!(query::<Query>("limit=5&state=dead").is_ok());
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Event {
        subject: Option<Subject>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Subject {
        id: String,
        version: Option<i64>,
    }

    #[test]
    fn a_nested_field_is_named_by_its_whole_path() {
        let field = |body: &str| json::<Event>(body.as_bytes()).expect_err(body).field;
        assert_eq!(
            field(r#"{"subject": {"id": "a", "colour": 1}}"#).as_deref(),
            Some("subject.colour")
        );
        assert_eq!(
            field(r#"{"subject": {"version": 1}}"#).as_deref(),
            Some("subject.id")
        );
        assert_eq!(
            field(r#"{"subject": {"id": "a", "version": "1"}}"#).as_deref(),
            Some("subject.version")
        );
        assert_eq!(field(r#""x""#), None, "the whole body names no field");
    }

    #[test]
    fn a_field_becomes_its_json_pointer() {
        assert_eq!(pointer("events[3].data"), "/events/3/data");
        assert_eq!(pointer("subject.version"), "/subject/version");
        assert_eq!(pointer("events[0]"), "/events/0");
        assert_eq!(pointer("a/b~c"), "/a~1b~0c");
        assert_eq!(pointer(""), "");
    }
}
