//! What is wrong with one field of one event, and the check of `data` (or
//! a rendition) against the catalog at a version. Pure.

use serde_json::Value;

use crate::catalog::{Catalog, DataError, Refusal};

/// What is wrong with one field of one event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    pub field: String,
    pub problem: String,
    pub kind: FieldErrorKind,
}

/// How a refusal is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// A malformed field (422 `invalid`).
    Invalid,
    /// The payload is too large (413, not 422).
    TooLarge,
    /// The catalog does not name the type (422 `unknown-event-type`).
    UnknownType,
    /// `data` fails its version's schema (422 `invalid-data`), each error
    /// with its pointer inside `data`.
    InvalidData(Vec<DataError>),
}

pub(in crate::domain) fn field_error(field: &str, problem: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        problem: problem.into(),
        kind: FieldErrorKind::Invalid,
    }
}

/// Checks `data` (at `field`) against the catalog: the type must be known
/// (when the catalog is strict), the version must exist, and `data` must be
/// valid.
pub(in crate::domain) fn check_against(
    catalog: &Catalog,
    event_type: &str,
    version: u32,
    payload: &str,
    field: &str,
) -> Result<(), FieldError> {
    let data: Value = serde_json::from_str(payload)
        .map_err(|e| field_error(field, format!("is not JSON: {e}")))?;
    catalog
        .check(event_type, version, &data)
        .map_err(|refusal| match refusal {
            Refusal::UnknownType => FieldError {
                field: "type".into(),
                problem: format!(
                    "`{event_type}` is not in the event catalog (GET /v1/event-types lists it)"
                ),
                kind: FieldErrorKind::UnknownType,
            },
            Refusal::UnknownVersion { latest } => field_error(
                if field == "data" {
                    "schema_version"
                } else {
                    field
                },
                format!("{event_type} has no version {version}; the latest is {latest}"),
            ),
            Refusal::InvalidData(errors) => FieldError {
                field: field.into(),
                problem: format!(
                    "does not match the schema of {event_type} version {version}: {}",
                    crate::catalog::describe(&errors)
                ),
                kind: FieldErrorKind::InvalidData(errors),
            },
        })
}
