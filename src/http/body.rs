//! Request bodies and queries, parsed into typed values with an error that
//! names the field and says which kind of wrong it is.

use serde::de::DeserializeOwned;

use super::problem::Problem;

/// Parses a JSON body. Syntax errors are 400 `malformed-json`; unknown fields,
/// wrong types and missing fields are 422 with the field's path.
pub fn json<T: DeserializeOwned>(body: &[u8]) -> Result<T, Problem> {
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        body
    };
    // The whole body must be one JSON value (no trailing bytes) before any
    // field is looked at, so a broken body is always `malformed-json`.
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| Problem::malformed_json(format!("the body is not JSON: {e}")))?;
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
    fn the_offending_field_is_named() {
        let p = json::<Body>(br#"{"url": "x", "colour": 1}"#).expect_err("invalid");
        assert_eq!(p.field.as_deref(), Some("colour"));
        let p = json::<Body>(br#"{"url": 5}"#).expect_err("invalid");
        assert_eq!(p.field.as_deref(), Some("url"));
        let p = json::<Body>(br#"{}"#).expect_err("invalid");
        assert_eq!(p.field.as_deref(), Some("url"));
    }
}
