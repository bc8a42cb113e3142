//! Whether a payload filter's `data.` paths can be in the events its
//! endpoint subscribes to, by the catalog's schemas. A path that no
//! subscribed type describes in any version is almost surely a typo
//! (`data.customerid`) that would silently filter out every event, so it is
//! refused when the filter is saved. Pure.
//!
//! The catalog's schemas name the fields producers send, so an object
//! schema with `properties` is read as holding those and no others, unless
//! it says otherwise (`additionalProperties` or `unevaluatedProperties`
//! other than `false`, or any `patternProperties`). A schema that names no
//! properties, or says nothing about a value's kind, may hold anything.
//! `$ref`s within the schema, `allOf`, `anyOf`, `oneOf`, `then` and `else`
//! are followed: a path any of them can hold is possible.

use serde_json::{Map, Value};

use super::{Catalog, EventType};
use crate::domain::{
    filter::{Filter, FilterError, Path},
    subscription::subscribes,
};

/// A condition of a filter whose path no subscribed event can contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImpossiblePath {
    /// Where the path is written in the filter (`/and/1/field`).
    pub at: String,
    /// The path (`data.customerid`).
    pub path: String,
    /// The subscribed types of the catalog, none of which holds it.
    pub types: Vec<String>,
}

impl From<ImpossiblePath> for FilterError {
    fn from(p: ImpossiblePath) -> FilterError {
        FilterError {
            at: p.at,
            message: format!(
                "`{}` is in no event this endpoint subscribes to ({}); GET /v1/event-types lists each type's fields",
                p.path,
                p.types.join(", ")
            ),
        }
    }
}

/// The first `data.` path of `filter` that no version of any type in
/// `catalog` that `subscribed` takes can contain. Nothing is refused when
/// no subscribed type is in the catalog, nor when a lenient catalog may
/// pass the endpoint events of types it does not describe.
pub fn impossible_path(
    catalog: &Catalog,
    subscribed: &[String],
    filter: &Filter,
) -> Option<ImpossiblePath> {
    let types: Vec<&EventType> = catalog
        .types()
        .filter(|t| subscribes(subscribed, &t.name))
        .collect();
    if types.is_empty() || (!catalog.strict && takes_undescribed(catalog, subscribed)) {
        return None;
    }
    filter.paths().into_iter().find_map(|(at, path)| {
        let keys = path.data_keys()?;
        let possible = types.iter().any(|t| {
            t.versions.iter().any(|v| {
                let mut budget = BUDGET;
                can_hold(&v.schema, &v.schema, keys, &mut budget)
            })
        });
        (!possible).then(|| ImpossiblePath {
            at,
            path: path.to_string(),
            types: types.iter().map(|t| t.name.clone()).collect(),
        })
    })
}

/// Whether `subscribed` takes types the catalog does not name: everything,
/// a wildcard, or an unknown type.
fn takes_undescribed(catalog: &Catalog, subscribed: &[String]) -> bool {
    subscribed.is_empty()
        || subscribed
            .iter()
            .any(|p| p.ends_with(".*") || catalog.get(p).is_none())
}

/// The most schemas visited for one path and version; past it, the path is
/// taken as possible (a schema that refers to itself ends there).
const BUDGET: usize = 1000;

/// Whether a value valid against `schema` (a part of `root`) can have
/// something at `keys`.
fn can_hold(root: &Value, schema: &Value, keys: &[String], budget: &mut usize) -> bool {
    // `false` holds nothing, not even the value itself.
    let s = match schema {
        Value::Bool(b) => return *b,
        Value::Object(s) => s,
        _ => return true,
    };
    let Some((key, rest)) = keys.split_first() else {
        return true;
    };
    if *budget == 0 {
        return true;
    }
    *budget -= 1;
    let parts = parts(root, s);
    for part in &parts {
        // A `$ref` that leads outside the schema could be anything.
        if part.is_none_or(|p| can_hold(root, p, keys, budget)) {
            return true;
        }
    }
    own(root, s, key, rest, !parts.is_empty(), budget)
}

/// The schemas `s` refers to or combines; `None` for a `$ref` that does
/// not lead to a part of `root`.
fn parts<'a>(root: &'a Value, s: &'a Map<String, Value>) -> Vec<Option<&'a Value>> {
    let mut out = Vec::new();
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        out.push(
            r.strip_prefix('#')
                .and_then(|pointer| root.pointer(pointer)),
        );
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = s.get(key) {
            out.extend(branches.iter().map(Some));
        }
    }
    out.extend(["then", "else"].iter().filter_map(|k| s.get(*k)).map(Some));
    out
}

/// Whether the schema's own keywords let a value have `key`, then `rest`
/// below it. `composed`: the schema refers to others, so it does not
/// describe everything by itself.
fn own(
    root: &Value,
    s: &Map<String, Value>,
    key: &str,
    rest: &[String],
    composed: bool,
    budget: &mut usize,
) -> bool {
    let allows = |kind: &str| match s.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(kind)),
        _ => true,
    };
    // Neither named properties nor sub-schemas: nothing said, anything goes.
    let silent = !composed && !s.contains_key("properties");
    let in_object = allows("object")
        && match s.get("properties").and_then(|p| p.get(key)) {
            Some(property) => can_hold(root, property, rest, budget),
            None if s
                .get("patternProperties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty()) =>
            {
                true
            }
            None => match s
                .get("additionalProperties")
                .or_else(|| s.get("unevaluatedProperties"))
            {
                Some(extra) => can_hold(root, extra, rest, budget),
                None => silent,
            },
        };
    in_object
        || (allows("array")
            && Path::index(key).is_some_and(|i| {
                let prefix = s.get("prefixItems").and_then(|p| p.get(i));
                match prefix.or_else(|| s.get("items")) {
                    Some(item) => can_hold(root, item, rest, budget),
                    None => silent,
                }
            }))
}
