//! `application/problem+json` (RFC 9457) errors with a stable `type` per kind.
//! A 500 tells the caller nothing internal; the log gets the whole chain.

use actix_web::{HttpResponse, ResponseError, http::StatusCode};
use serde::Serialize;

const TYPE_BASE: &str = "https://hookd.dev/problems/";

#[derive(Debug, Clone, Serialize)]
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
}

impl Problem {
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
        HttpResponse::build(self.status_code())
            .content_type("application/problem+json")
            .json(self)
    }
}

impl From<crate::store::StoreError> for Problem {
    fn from(e: crate::store::StoreError) -> Problem {
        Problem::internal(&e)
    }
}

impl From<sea_orm::DbErr> for Problem {
    fn from(e: sea_orm::DbErr) -> Problem {
        Problem::internal(&e)
    }
}
