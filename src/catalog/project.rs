//! Projection of a payload onto an older schema: what a newer version sends
//! that the older one does not name is dropped, recursively, so an endpoint
//! pinned to the older version gets a payload of the older shape. Pure.
//!
//! The rule follows the schema's own structure: an object schema with
//! `properties` keeps only the properties it names (each projected onto its
//! own subschema); an array schema with `items` projects every item. Any
//! other part of the value is kept as it is. The result is then validated
//! against the older schema by the caller: a projection is only used when it
//! is valid.

use serde_json::{Map, Value};

/// `value` projected onto `schema`.
pub fn project(schema: &Value, value: &Value) -> Value {
    match value {
        Value::Object(fields) => match schema.get("properties").and_then(Value::as_object) {
            Some(named) => Value::Object(
                fields
                    .iter()
                    .filter_map(|(k, v)| named.get(k).map(|s| (k.clone(), project(s, v))))
                    .collect::<Map<String, Value>>(),
            ),
            None => value.clone(),
        },
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) if item_schema.is_object() => {
                Value::Array(items.iter().map(|v| project(item_schema, v)).collect())
            }
            _ => value.clone(),
        },
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::project;
    use serde_json::json;

    #[test]
    fn properties_the_older_schema_does_not_name_are_dropped() {
        let v1 = json!({"type": "object", "properties": {"a": {}, "b": {}}});
        let v2_payload = json!({"a": 1, "b": "x", "c": true});
        assert_eq!(project(&v1, &v2_payload), json!({"a": 1, "b": "x"}));
    }

    #[test]
    fn nested_objects_and_array_items_are_projected_too() {
        let v1 = json!({"type": "object", "properties": {
            "usage": {"type": "object", "properties": {"tokens": {}}},
            "lines": {"type": "array", "items": {"type": "object", "properties": {"id": {}}}}}});
        let payload = json!({"usage": {"tokens": 5, "model": "m"},
                             "lines": [{"id": "l1", "extra": 1}, {"id": "l2"}]});
        assert_eq!(
            project(&v1, &payload),
            json!({"usage": {"tokens": 5}, "lines": [{"id": "l1"}, {"id": "l2"}]})
        );
    }

    #[test]
    fn an_object_schema_that_names_nothing_keeps_everything() {
        let open = json!({"type": "object"});
        let payload = json!({"anything": {"goes": [1, 2]}});
        assert_eq!(project(&open, &payload), payload);
    }
}
