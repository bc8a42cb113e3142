//! `application/problem+json` (RFC 9457) errors with a stable `type` per kind.
//! A 500 tells the caller nothing internal; the log gets the whole chain.

use actix_web::{HttpResponse, ResponseError, http::StatusCode};
use serde::Serialize;

const TYPE_BASE: &str = "https://hookd.dev/problems/";

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
    /// For `invalid-data`: each way `data` fails its schema, with the JSON
    /// pointer of the value in the request body (`/events/3/data/final_cost`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<crate::catalog::DataError>>,
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
            retry_after: None,
        }
    }
    pub fn with_field(mut self, field: impl Into<String>) -> Problem {
        self.field = Some(field.into());
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
    /// `data` fails its schema; `errors` point into the request body.
    pub fn invalid_data(
        field: impl Into<String>,
        detail: impl Into<String>,
        errors: Vec<crate::catalog::DataError>,
    ) -> Problem {
        let mut p = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-data",
            "Data does not match its schema",
            detail,
        )
        .with_field(field);
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
    pub fn invalid_cursor() -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid-cursor",
            "Invalid cursor",
            "the cursor is not one this API gave out",
        )
        .with_field("after")
    }
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

/// Whether the database could not be reached at all (as opposed to a query
/// that failed): the caller may retry, here or on another instance.
fn unreachable(e: &sea_orm::DbErr) -> bool {
    matches!(
        e,
        sea_orm::DbErr::ConnectionAcquire(_) | sea_orm::DbErr::Conn(_)
    )
}

impl From<crate::store::StoreError> for Problem {
    fn from(e: crate::store::StoreError) -> Problem {
        match &e {
            crate::store::StoreError::Db(db) if unreachable(db) => {
                Problem::database_unavailable(&e)
            }
            _ => Problem::internal(&e),
        }
    }
}

impl From<sea_orm::DbErr> for Problem {
    fn from(e: sea_orm::DbErr) -> Problem {
        if unreachable(&e) {
            Problem::database_unavailable(&e)
        } else {
            Problem::internal(&e)
        }
    }
}

/// The error answers every route may give, for the OpenAPI document.
pub struct Errors;

/// An `application/problem+json` answer described as `description`.
fn problem_response(
    description: &str,
) -> utoipa::openapi::RefOr<utoipa::openapi::response::Response> {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/problem+json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
        .into()
}

impl utoipa::IntoResponses for Errors {
    fn responses() -> std::collections::BTreeMap<
        String,
        utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
    > {
        [
            ("400", "Malformed JSON (or a repeated key), query or cursor"),
            ("401", "Missing, unknown or revoked API key"),
            ("403", "The key's role may not use this route"),
            ("408", "The body did not arrive within http.body_timeout"),
            (
                "404",
                "Not found (another partner's object is not found either)",
            ),
            ("409", "Conflict"),
            ("413", "Too large"),
            (
                "414",
                "The request target is longer than http.max_uri_bytes",
            ),
            ("415", "Not application/json"),
            (
                "422",
                "Invalid: unknown field, wrong type, out of range, bad URL",
            ),
            ("429", "Rate limited; see Retry-After"),
            ("500", "Internal error"),
            ("503", "The database is unavailable"),
        ]
        .into_iter()
        .map(|(code, d)| (code.to_string(), problem_response(d)))
        .collect()
    }
}

/// The error answers of `POST /v1/events`: the common ones, with the 422
/// spelt out for the event catalog's refusals.
pub struct IngestErrors;

impl utoipa::IntoResponses for IngestErrors {
    fn responses() -> std::collections::BTreeMap<
        String,
        utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
    > {
        let mut responses = <Errors as utoipa::IntoResponses>::responses();
        responses.insert(
            "422".into(),
            problem_response(
                "`unknown-event-type`: the catalog does not name the type (`field` is `type` or \
                 `events[i].type`). `invalid-data`: `data` fails its version's JSON Schema; \
                 `errors` lists up to 10 failures, each with the JSON pointer of the value in \
                 the request (`/events/3/data/final_cost`). `validation`: another field is \
                 malformed, or `schema_version` names no version of the type.",
            ),
        );
        responses
    }
}
