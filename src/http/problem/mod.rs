//! `application/problem+json` (RFC 9457) errors with a stable `type` per kind.
//! A 500 tells the caller nothing internal; the log gets the whole chain.
//!
//! One rule decides 400 against 422: 400 when hookd cannot read the request
//! (the body is not one JSON value, a key is given twice, the query string
//! cannot be decoded), 422 when it read the request and a value breaks a
//! rule (an unknown field or query parameter, a wrong type, a value out of
//! range or not in its list, a cursor hookd did not give out). The same
//! mistake gets the same answer in a body and in a query. A problem about
//! one value names it in `field`.

use actix_web::{HttpResponse, ResponseError, http::StatusCode};
use serde::Serialize;

const TYPE_BASE: &str = "https://hookd.dev/problems/";

mod listing;
mod responses;

pub use listing::{MAX_LISTED, ProblemError};
pub use responses::{Errors, IngestErrors};

/// An error, as `application/problem+json` (RFC 9457).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Everything wrong with the request, up to 20, each with the JSON
    /// pointer of the value in the request body (`/events/3/data/balance`):
    /// every refused event of a batch, and each way `data` fails its schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<ProblemError>>,
    /// How many more errors were found than `errors` lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more_errors: Option<usize>,
    /// Seconds to wait, sent as `Retry-After` with a 429.
    #[serde(skip)]
    #[schema(ignore)]
    pub retry_after: Option<u64>,
}

impl Problem {
    /// A problem of any status and type, for the few answers made outside
    /// the routes (the door's and the router's).
    pub fn new_public(
        status: StatusCode,
        slug: &str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Problem {
        Problem::new(status, slug, title, detail)
    }

    fn new(
        status: StatusCode,
        slug: &str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Problem {
        Problem {
            kind: format!("{TYPE_BASE}{slug}"),
            title,
            status: status.as_u16(),
            detail: detail.into(),
            field: None,
            event_id: None,
            errors: None,
            more_errors: None,
            retry_after: None,
        }
    }
    /// Names the offending value; the empty name (the whole body) names none.
    pub fn with_field(mut self, field: impl Into<String>) -> Problem {
        let field = field.into();
        self.field = (!field.is_empty()).then_some(field);
        self
    }
    pub fn with_event(mut self, id: impl Into<String>) -> Problem {
        self.event_id = Some(id.into());
        self
    }

    pub fn unauthorized() -> Problem {
        Problem::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "Unauthorized",
            "a valid API key is required: Authorization: Bearer <key>",
        )
    }
    pub fn forbidden(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::FORBIDDEN, "forbidden", "Forbidden", detail)
    }
    pub fn not_found(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::NOT_FOUND, "not-found", "Not found", detail)
    }
    pub fn malformed_json(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "malformed-json",
            "Malformed JSON",
            detail,
        )
    }
    pub fn duplicate_key(path: String) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "duplicate-key",
            "Duplicate key",
            format!("the key `{path}` appears more than once; send each key once"),
        )
        .with_field(path)
    }
    /// A query parameter given twice: which value counts is ambiguous.
    pub fn duplicate_parameter(name: String) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "duplicate-key",
            "Duplicate key",
            format!("the query parameter `{name}` is given more than once; give it once"),
        )
        .with_field(name)
    }
    pub fn body_timeout(timeout: std::time::Duration) -> Problem {
        Problem::new(
            StatusCode::REQUEST_TIMEOUT,
            "request-timeout",
            "Request timeout",
            format!(
                "the request body did not arrive within {} ms (http.body_timeout)",
                timeout.as_millis()
            ),
        )
    }
    pub fn invalid(field: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation",
            "Invalid request",
            detail,
        )
        .with_field(field)
    }
    pub fn too_large(field: Option<String>, detail: impl Into<String>) -> Problem {
        let mut p = Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload-too-large",
            "Payload too large",
            detail,
        );
        p.field = field;
        p
    }
    pub fn unsupported_media_type(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "Unsupported media type",
            detail,
        )
    }
    pub fn unknown_event_type(field: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown-event-type",
            "Unknown event type",
            detail,
        )
        .with_field(field)
    }
    /// `data` fails its schema; `errors` (each at `prefix`, the pointer of
    /// `data` in the request body) say where.
    pub fn invalid_data(
        field: impl Into<String>,
        detail: impl Into<String>,
        prefix: &str,
        errors: Vec<crate::catalog::DataError>,
    ) -> Problem {
        let mut p = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-data",
            "Data does not match its schema",
            detail,
        )
        .with_field(field);
        let errors = errors
            .into_iter()
            .map(|e| ProblemError {
                kind: p.kind.clone(),
                pointer: format!("{prefix}{}", e.pointer),
                message: e.message,
            })
            .collect();
        p.errors = Some(errors);
        p
    }
    /// `data` holds what looks like a secret: each `(pointer, rule)` in
    /// `found` says where and which rule; the value is never repeated.
    pub fn secret_in_data(field: impl Into<String>, found: Vec<(String, String)>) -> Problem {
        let places: Vec<String> = found
            .iter()
            .map(|(at, rule)| format!("{at} ({rule})"))
            .collect();
        let detail = format!(
            "{} looks like a secret; events never carry key material or credentials: send an id or a masked prefix instead, or ask the operator to allow the field (payload.allow)",
            places.join(", ")
        );
        let mut p = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "secret-in-data",
            "Data holds a secret",
            detail,
        )
        .with_field(field);
        let errors = found
            .into_iter()
            .map(|(pointer, rule)| ProblemError {
                kind: p.kind.clone(),
                pointer,
                message: format!("looks like a secret (rule `{rule}`)"),
            })
            .collect();
        p.errors = Some(errors);
        p
    }
    pub fn unknown_field(field: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown-field",
            "Unknown field",
            detail,
        )
        .with_field(field)
    }
    pub fn invalid_type(field: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-type",
            "Invalid type",
            detail,
        )
        .with_field(field)
    }
    pub fn out_of_range(field: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "out-of-range",
            "Out of range",
            detail,
        )
        .with_field(field)
    }
    pub fn invalid_url(field: impl Into<String>, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-url",
            "Invalid callback URL",
            detail,
        )
        .with_field(field)
    }
    /// A value not among the ones `field` takes.
    pub fn not_one_of(field: &str, value: &str, allowed: &[&str]) -> Problem {
        Problem::out_of_range(
            field,
            format!("{field} `{value}` is not one of: {}", allowed.join(", ")),
        )
    }
    pub fn invalid_cursor() -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-cursor",
            "Invalid cursor",
            "the cursor is not one this API gave out; pass a `next_cursor` as `after`, \
             or leave `after` out to start from the beginning",
        )
        .with_field("after")
    }
    /// A query string that cannot be decoded at all (400). A parameter hookd
    /// decoded but refuses is 422, like the same value in a body.
    pub fn invalid_query(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid-query",
            "Invalid query",
            detail,
        )
    }
    pub fn too_many_requests(retry_after: u64) -> Problem {
        let mut p = Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate-limited",
            "Too many requests",
            format!("this key is over its rate limit; retry in {retry_after} s"),
        );
        p.retry_after = Some(retry_after);
        p
    }
    /// An address over its budget of requests without a valid key.
    pub fn too_many_failures(retry_after: u64) -> Problem {
        let mut p = Problem::too_many_requests(retry_after);
        p.detail = format!(
            "too many requests without a valid key from this address; retry in {retry_after} s"
        );
        p
    }
    pub fn conflict(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::CONFLICT, "conflict", "Conflict", detail)
    }
    pub fn unavailable(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "Service unavailable",
            detail,
        )
    }
    /// The database cannot be reached: logged, answered 503 with a retry.
    pub fn database_unavailable(error: &dyn std::fmt::Display) -> Problem {
        tracing::warn!(error = %error, "the database is unavailable");
        let mut p = Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "database-unavailable",
            "Service unavailable",
            "the database cannot be reached; nothing was written; retry in 2 s",
        );
        p.retry_after = Some(2);
        p
    }
    /// The database's disk is full: nothing was written; answered 503 with
    /// a retry, and logged once a minute at most (with how many were
    /// refused meanwhile), not per request.
    pub fn storage_full(error: &dyn std::fmt::Display) -> Problem {
        full_disk_logged(error);
        let mut p = Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "storage-full",
            "Service unavailable",
            "the database's disk is full; nothing was written; retry in 5 s",
        );
        p.retry_after = Some(5);
        p
    }
    /// This instance is stopping: the producer should retry (elsewhere).
    pub fn stopping() -> Problem {
        let mut p = Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "stopping",
            "Service unavailable",
            "this hookd instance is stopping; retry in 1 s (another instance may answer)",
        );
        p.retry_after = Some(1);
        p
    }
    /// An unexpected failure: logged in full, answered without detail.
    pub fn internal(error: &dyn std::fmt::Display) -> Problem {
        tracing::error!(error = %error, "request failed");
        Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal error",
            "an internal error occurred; it has been logged",
        )
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.title, self.detail)
    }
}

impl ResponseError for Problem {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if let Some(secs) = self.retry_after {
            response.insert_header(("retry-after", secs.to_string()));
        }
        response.content_type("application/problem+json").json(self)
    }
}

use crate::store::full::is_storage_full;

use crate::store::is_unreachable as unreachable;

impl From<crate::store::StoreError> for Problem {
    fn from(e: crate::store::StoreError) -> Problem {
        match &e {
            crate::store::StoreError::Db(db) if unreachable(db) => {
                Problem::database_unavailable(&e)
            }
            crate::store::StoreError::Db(db) if is_storage_full(db) => Problem::storage_full(&e),
            _ => Problem::internal(&e),
        }
    }
}

impl From<sea_orm::DbErr> for Problem {
    fn from(e: sea_orm::DbErr) -> Problem {
        if unreachable(&e) {
            Problem::database_unavailable(&e)
        } else if is_storage_full(&e) {
            Problem::storage_full(&e)
        } else {
            Problem::internal(&e)
        }
    }
}

/// Logs a full disk once a minute at most, with the count held back.
fn full_disk_logged(error: &dyn std::fmt::Display) {
    use std::sync::{LazyLock, Mutex};
    use std::time::{Duration, Instant};
    static LIMIT: LazyLock<Mutex<crate::delivery::log_limit::LogLimit<()>>> = LazyLock::new(|| {
        Mutex::new(crate::delivery::log_limit::LogLimit::new(
            Duration::from_secs(60),
        ))
    });
    static SINCE: LazyLock<Instant> = LazyLock::new(Instant::now);
    let now_ms = i64::try_from(SINCE.elapsed().as_millis()).unwrap_or(i64::MAX);
    let admitted = LIMIT
        .lock()
        .map(|mut limit| limit.admit((), now_ms))
        .unwrap_or(Some(0));
    if let Some(held_back) = admitted {
        tracing::error!(error = %error, refused_since_last_line = held_back,
            "the database's disk is full: ingest answers 503 storage-full until space is freed");
    }
}
