//! Checking `data` against a compiled schema: the errors, each with the JSON
//! pointer of the value that failed, at most `MAX_ERRORS` of them. A field a
//! closed schema does not declare is pointed to itself (`/api_key`), not to
//! the object that holds it.

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
        .flat_map(|e| {
            let at = e.instance_path().as_str().to_string();
            match e.kind() {
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                    unexpected
                        .iter()
                        .map(|name| undeclared(&at, name))
                        .collect()
                }
                _ => vec![DataError {
                    pointer: at,
                    message: e.to_string(),
                }],
            }
        })
        .take(MAX_ERRORS)
        .collect();
    Some(errors)
}

/// The field `name` of the object at `at`, which its schema does not declare.
fn undeclared(at: &str, name: &str) -> DataError {
    // RFC 6901: `~` and `/` inside a name are escaped.
    let escaped = name.replace('~', "~0").replace('/', "~1");
    DataError {
        pointer: format!("{at}/{escaped}"),
        message: format!(
            "`{name}` is not a field of this schema (it is closed: additionalProperties is false)"
        ),
    }
}
