//! Which filter paths the catalog refuses as impossible for an endpoint's
//! subscriptions: tables against the bundled catalog, then small catalogs
//! for the schema keywords the bundled one does not use.

use serde_json::{Value, json};

use super::{Catalog, ImpossiblePath, impossible_path, load_files};
use crate::domain::filter::{Filter, FilterError};

fn types(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| s.to_string()).collect()
}

/// A filter of one condition on `path`.
fn on(path: &str) -> Filter {
    Filter::parse(&json!({"field": path, "exists": true})).expect("a valid filter")
}

/// The impossible path found for `path`, if any.
fn check(catalog: &Catalog, subscribed: &[&str], path: &str) -> Option<String> {
    impossible_path(catalog, &types(subscribed), &on(path)).map(|p| p.path)
}

/// Checks a table of (subscribed types, path, whether it is refused).
fn table(catalog: &Catalog, rows: &[(&[&str], &str, bool)]) {
    let wrong: Vec<String> = rows
        .iter()
        .filter(|(subscribed, path, refused)| {
            check(catalog, subscribed, path).is_some() != *refused
        })
        .map(|(subscribed, path, refused)| {
            let verdict = if *refused { "refused" } else { "allowed" };
            format!("  {path} for {subscribed:?} should be {verdict}")
        })
        .collect();
    assert!(wrong.is_empty(), "wrong checks:\n{}", wrong.join("\n"));
}

#[test]
fn a_path_no_subscribed_type_holds_is_refused_against_the_bundled_catalog() {
    let bundled = Catalog::bundled();
    table(
        &bundled,
        &[
            (&["balance.updated"], "data.customer_id", false),
            (&["balance.updated"], "data.customerid", true),
            (&["balance.updated"], "data.balance.amount", true),
            (&["balance.updated"], "data.balance.0", true),
            (&["balance.updated"], "data.threshold", true),
            (&["balance.*"], "data.threshold", false),
            (
                &["balance.updated", "budget.threshold_crossed"],
                "data.limit",
                false,
            ),
            (&["usage.finalized"], "data.model", false),
            (&["usage.*"], "data.input_tokens", false),
            (&["endpoint.failing"], "data.last_error.status_code", false),
            (&["endpoint.failing"], "data.last_error.code", true),
            (&["endpoint.failing"], "data.last_error.at.seconds", true),
            (&[], "data.last_error.category", false),
            (&[], "data.nothing_at_all", true),
        ],
    );
}

#[test]
fn envelope_paths_and_types_outside_the_catalog_are_never_refused() {
    let bundled = Catalog::bundled();
    for path in ["type", "subject.type", "subject.id"] {
        assert_eq!(check(&bundled, &["balance.updated"], path), None, "{path}");
    }
    assert_eq!(check(&bundled, &["made.up"], "data.anything"), None);
    assert_eq!(check(&bundled, &["made.*"], "data.anything"), None);
    assert!(
        check(&bundled, &["balance.updated", "made.up"], "data.anything").is_some(),
        "a strict catalog never passes made.up events"
    );
    let lenient = bundled.with_strict(false);
    for subscribed in [&["balance.updated", "made.up"][..], &["balance.*"], &[]] {
        assert_eq!(
            check(&lenient, subscribed, "data.anything"),
            None,
            "a lenient catalog may pass undescribed events to {subscribed:?}"
        );
    }
    assert!(check(&lenient, &["balance.updated"], "data.anything").is_some());
}

#[test]
fn the_first_impossible_path_is_reported_where_it_is_written() {
    let f = Filter::parse(&json!({"and": [
        {"field": "data.customer_id", "eq": "cus_1"},
        {"not": {"field": "data.customerid", "eq": "cus_2"}},
        {"field": "data.amount", "gt": 1}
    ]}))
    .expect("a valid filter");
    let found = impossible_path(&Catalog::bundled(), &types(&["balance.updated"]), &f);
    assert_eq!(
        found,
        Some(ImpossiblePath {
            at: "/and/1/not/field".into(),
            path: "data.customerid".into(),
            types: types(&["balance.updated"]),
        })
    );
    let error = FilterError::from(found.expect("found"));
    assert_eq!(error.at, "/and/1/not/field");
    assert!(
        error.message.starts_with(
            "`data.customerid` is in no event this endpoint subscribes to (balance.updated)"
        ),
        "{error}"
    );
}

/// A catalog of one type, `thing.happened`, with this schema and example.
fn catalog_of(schema: Value, example: Value) -> Catalog {
    let file = json!({"type": "thing.happened", "description": "d", "sensitivity": "s",
                      "versions": [{"version": 1, "schema": schema, "example": example}]});
    load_files(&[("thing.happened.json".into(), file.to_string())]).expect("the catalog loads")
}

const THING: &[&str] = &["thing.happened"];

#[test]
fn refs_to_defs_are_followed_even_when_they_recur() {
    let c = catalog_of(
        json!({"$ref": "#/$defs/node", "$defs": {
            "node": {"type": "object", "properties": {
                "value": {"type": "string"},
                "next": {"$ref": "#/$defs/node"}}},
            "money": {"type": "object", "properties": {"amount": {"type": "string"}}}}}),
        json!({"value": "a", "next": {"value": "b"}}),
    );
    table(
        &c,
        &[
            (THING, "data.value", false),
            (THING, "data.next.next.next.value", false),
            (THING, "data.next.weight", true),
            (THING, "data.amount", true),
        ],
    );
}

#[test]
fn a_path_any_branch_of_a_combination_holds_is_possible() {
    let c = catalog_of(
        json!({"type": "object", "properties": {"kind": {"type": "string"}},
               "anyOf": [{"properties": {"card": {"type": "object", "properties": {"last4": {}}}}},
                         {"properties": {"iban": {"type": "string"}}}],
               "allOf": [{"properties": {"at": {}}}]}),
        json!({"kind": "card"}),
    );
    table(
        &c,
        &[
            (THING, "data.kind", false),
            (THING, "data.card.last4", false),
            (THING, "data.iban", false),
            (THING, "data.at", false),
            (THING, "data.card.brand", true),
            (THING, "data.cheque", true),
        ],
    );
}

#[test]
fn additional_properties_open_an_object_and_a_schema_naming_nothing_holds_anything() {
    let c = catalog_of(
        json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "extra": {"type": "object", "properties": {"a": {}}, "additionalProperties": true},
            "closed": {"type": "object", "properties": {"a": {}}, "additionalProperties": false},
            "patterned": {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x_": {}}},
            "open": {"type": "object"},
            "anything": {}}}),
        json!({}),
    );
    table(
        &c,
        &[
            (THING, "data.labels.team", false),
            (THING, "data.labels.team.name", true),
            (THING, "data.extra.whatever.below", false),
            (THING, "data.closed.a", false),
            (THING, "data.closed.b", true),
            (THING, "data.patterned.x_1", false),
            (THING, "data.open.a.b.c", false),
            (THING, "data.anything.0.b", false),
        ],
    );
}

#[test]
fn array_items_are_followed_by_index() {
    let c = catalog_of(
        json!({"type": "object", "properties": {
            "lines": {"type": "array", "items": {"type": "object", "properties": {"id": {}}}},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "object", "properties": {"n": {}}}]},
            "tags": {"type": "array"}}}),
        json!({}),
    );
    table(
        &c,
        &[
            (THING, "data.lines.0.id", false),
            (THING, "data.lines.12.id", false),
            (THING, "data.lines.0.name", true),
            (THING, "data.lines.first", true),
            (THING, "data.pair.1.n", false),
            (THING, "data.pair.0.n", true),
            (THING, "data.tags.3.anything", false),
        ],
    );
}
