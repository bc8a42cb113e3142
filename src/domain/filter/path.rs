//! A filter's path into an event: `type`, `subject.type`, `subject.id`, or
//! `data` and the keys below it (`data.limit.amount`, `data.items.0.id`),
//! and where it leads in a given event.

use std::fmt;

use serde_json::Value;

use super::{EventView, MAX_SEGMENTS, MAX_STRING};

/// A valid path. Displayed as written (`data.customer_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Path {
    /// `type`: the event's type.
    Type,
    /// `subject.type`.
    SubjectType,
    /// `subject.id`.
    SubjectId,
    /// `data.` and at least one key; a key of digits also indexes an array.
    Data(Vec<String>),
}

/// What a path leads to in one event.
#[derive(Debug, Clone, Copy)]
pub(super) enum Found<'a> {
    /// An envelope field: always a string.
    Text(&'a str),
    /// A value inside `data`.
    Json(&'a Value),
}

const ROOTS: &str = "a path starts with type, subject.type, subject.id or data (data.customer_id)";

impl Path {
    /// Parses a path; the error says what to change.
    pub(super) fn parse(s: &str) -> Result<Path, String> {
        if s.is_empty() {
            return Err(format!("is empty: {ROOTS}"));
        }
        if s.len() > MAX_STRING {
            return Err(format!("is longer than {MAX_STRING} bytes"));
        }
        if s.chars().any(char::is_control) {
            return Err("contains a control character".into());
        }
        let segments: Vec<&str> = s.split('.').collect();
        if segments.len() > MAX_SEGMENTS {
            return Err(format!(
                "has {} segments; a path has at most {MAX_SEGMENTS}",
                segments.len()
            ));
        }
        if segments.iter().any(|p| p.is_empty()) {
            return Err(format!(
                "`{s}` has an empty segment (two dots in a row, or a dot at an end)"
            ));
        }
        match segments.as_slice() {
            ["type"] => Ok(Path::Type),
            ["subject", "type"] => Ok(Path::SubjectType),
            ["subject", "id"] => Ok(Path::SubjectId),
            ["data"] => {
                Err("names all of data: name a field inside it, like data.customer_id".into())
            }
            ["data", keys @ ..] => Ok(Path::Data(keys.iter().map(|k| k.to_string()).collect())),
            ["type", ..] => Err("`type` is a string and has no fields".into()),
            ["subject", ..] => Err("a subject has two fields: subject.type and subject.id".into()),
            ["partner_id", ..] => Err(format!(
                "`partner_id` cannot be filtered on: an endpoint only receives its own partner's events; {ROOTS}"
            )),
            ["event_id" | "id", ..] => Err(format!(
                "`{}` cannot be filtered on: every event has its own id; {ROOTS}",
                segments[0]
            )),
            [root, ..] => Err(format!("`{root}` is not a field of an event: {ROOTS}")),
            [] => Err(format!("is empty: {ROOTS}")),
        }
    }

    /// The keys below `data`, for a `data.` path.
    pub fn data_keys(&self) -> Option<&[String]> {
        match self {
            Path::Data(keys) => Some(keys),
            _ => None,
        }
    }

    /// A key as an array index: digits without a leading zero (`0`, `12`).
    /// On an object, the same key names a field.
    pub fn index(key: &str) -> Option<usize> {
        let canonical = key == "0" || !key.starts_with('0');
        if canonical && key.bytes().all(|b| b.is_ascii_digit()) {
            key.parse().ok()
        } else {
            None
        }
    }

    /// Where the path leads in `e`; `None` when nothing is there.
    pub(super) fn find<'a>(&self, e: &EventView<'a>) -> Option<Found<'a>> {
        match self {
            Path::Type => Some(Found::Text(e.event_type)),
            Path::SubjectType => e.subject.map(|(t, _)| Found::Text(t)),
            Path::SubjectId => e.subject.map(|(_, id)| Found::Text(id)),
            Path::Data(keys) => {
                let mut at = e.data;
                for key in keys {
                    at = match at {
                        Value::Object(fields) => fields.get(key)?,
                        Value::Array(items) => items.get(Path::index(key)?)?,
                        _ => return None,
                    };
                }
                Some(Found::Json(at))
            }
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Type => f.write_str("type"),
            Path::SubjectType => f.write_str("subject.type"),
            Path::SubjectId => f.write_str("subject.id"),
            Path::Data(keys) => write!(f, "data.{}", keys.join(".")),
        }
    }
}
