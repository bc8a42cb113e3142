//! Checking `data` against a compiled schema: the errors, each with the JSON
//! pointer of the value that failed, at most `MAX_ERRORS` of them.

use serde::Serialize;
use serde_json::Value;

/// The most errors reported for one event.
pub const MAX_ERRORS: usize = 10;

/// One way `data` fails its schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct DataError {
    /// A JSON pointer to the offending value; the caller prefixes where
    /// `data` sits (`/events/3/data`).
    pub pointer: String,
    pub message: String,
}

/// The errors as one line: `/currency "dollars" does not match …; /balance …`.
pub fn describe(errors: &[DataError]) -> String {
    errors
        .iter()
        .map(|e| {
            let at = if e.pointer.is_empty() {
                "/"
            } else {
                &e.pointer
            };
            format!("{at} {}", e.message)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The errors of `data`, or `None` when it is valid.
pub(super) fn errors(validator: &jsonschema::Validator, data: &Value) -> Option<Vec<DataError>> {
    if validator.is_valid(data) {
        return None;
    }
    let errors: Vec<DataError> = validator
        .iter_errors(data)
        .take(MAX_ERRORS)
        .map(|e| DataError {
            pointer: e.instance_path().as_str().to_string(),
            message: e.to_string(),
        })
        .collect();
    Some(errors)
}
