//! An endpoint's `schema_versions`: event type → the version it receives
//! (an integer), or `"latest"` for the event as the producer sent it (the
//! same as no pin). Every pin must name a type and a version the catalog has.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::{catalog::Catalog, http::problem::Problem};

/// The pins as given, checked against the catalog; `"latest"` drops a pin.
pub fn parse(
    given: &BTreeMap<String, Value>,
    catalog: &Catalog,
) -> Result<BTreeMap<String, u32>, Problem> {
    let mut pins = BTreeMap::new();
    for (event_type, v) in given {
        let field = format!("schema_versions.{event_type}");
        let Some(t) = catalog.get(event_type) else {
            return Err(Problem::unknown_event_type(
                field,
                format!("`{event_type}` is not in the event catalog; GET /v1/event-types lists it"),
            ));
        };
        if v.as_str() == Some("latest") {
            continue;
        }
        let versions = || {
            t.versions
                .iter()
                .map(|x| x.version.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let version = v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| t.version(*n).is_some())
            .ok_or_else(|| {
                Problem::invalid(
                    field.clone(),
                    format!(
                        "{field} must be one of the versions of {event_type} ({}) or \"latest\"",
                        versions()
                    ),
                )
            })?;
        pins.insert(event_type.clone(), version);
    }
    Ok(pins)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pins(v: Value) -> Result<BTreeMap<String, u32>, Problem> {
        let given: BTreeMap<String, Value> = serde_json::from_value(v).expect("an object");
        parse(&given, &Catalog::bundled())
    }

    #[test]
    fn a_pin_names_a_known_type_and_one_of_its_versions_or_latest() {
        assert_eq!(
            pins(json!({"usage.finalized": 1})).expect("valid")["usage.finalized"],
            1
        );
        assert!(
            pins(json!({"usage.finalized": "latest"}))
                .expect("valid")
                .is_empty()
        );
        let unknown = pins(json!({"made.up": 1})).expect_err("unknown type");
        assert_eq!(unknown.field.as_deref(), Some("schema_versions.made.up"));
        for bad in [json!(7), json!(0), json!("1"), json!(1.5)] {
            assert!(pins(json!({"usage.finalized": bad})).is_err(), "{bad}");
        }
    }
}
