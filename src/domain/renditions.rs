//! An event's `data` at other versions of its type: sent by the producer in
//! `renditions` (`{"1": {...}}`) or projected at fanout for endpoints pinned
//! to an older, compatible version. Each is kept as the exact text that is
//! sent, so every retry carries the same bytes. Pure.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::event::field::{FieldError, FieldErrorKind, check_against, field_error};
use crate::catalog::Catalog;

/// Version → `data` at that version, as sent (the catalog's renderer reads them).
pub use crate::catalog::render::Renditions;

/// The producer's renditions, each checked: a version of the type other than
/// the one sent, an object, within the size cap, valid at its version.
pub fn checked(
    given: &BTreeMap<String, Box<RawValue>>,
    sent: u32,
    event_type: &str,
    catalog: &Catalog,
    max_bytes: usize,
) -> Result<Renditions, FieldError> {
    let mut out = Renditions::new();
    for (key, data) in given {
        let field = format!("renditions.{key}");
        let version = key
            .parse::<u32>()
            .ok()
            .filter(|v| *v >= 1 && key.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| field_error(&field, "must be keyed by a positive version number"))?;
        if version == sent {
            return Err(field_error(
                &field,
                "is the version of `data` itself; send it once, as `data`",
            ));
        }
        let text = data.get();
        if !text.starts_with('{') {
            return Err(field_error(&field, "must be a JSON object"));
        }
        if text.len() > max_bytes {
            return Err(FieldError {
                kind: FieldErrorKind::TooLarge,
                ..field_error(
                    &field,
                    format!("is {} bytes, more than the {max_bytes} allowed", text.len()),
                )
            });
        }
        check_against(catalog, event_type, version, text, &field)?;
        out.insert(version, text.to_string());
    }
    Ok(out)
}

/// The renditions as stored: a JSON object of the exact texts, or `None`.
pub fn to_text(r: &Renditions) -> Option<String> {
    if r.is_empty() {
        return None;
    }
    let body: Vec<String> = r
        .iter()
        .map(|(v, data)| format!("\"{v}\":{data}"))
        .collect();
    Some(format!("{{{}}}", body.join(",")))
}

/// The renditions from their stored text.
pub fn from_text(text: Option<&str>) -> Result<Renditions, String> {
    let Some(text) = text else {
        return Ok(Renditions::new());
    };
    let raw: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(text).map_err(|e| format!("renditions: {e}"))?;
    raw.into_iter()
        .map(|(k, v)| {
            let version = k
                .parse::<u32>()
                .map_err(|_| format!("renditions: key `{k}`"))?;
            Ok((version, v.get().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_renditions_come_back_byte_for_byte() {
        let mut r = Renditions::new();
        r.insert(1, r#"{"final_cost":"1.50","n":1e3}"#.to_string());
        r.insert(3, "{}".to_string());
        let text = to_text(&r).expect("not empty");
        assert_eq!(from_text(Some(&text)), Ok(r));
        assert_eq!(to_text(&Renditions::new()), None);
        assert_eq!(from_text(None), Ok(Renditions::new()));
    }
}
