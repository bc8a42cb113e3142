//! Filters that are refused, each at the location of its mistake with a
//! message that says what to change.

use serde_json::json;

use super::*;

fn refused(v: &Value) -> FilterError {
    match Filter::parse(v) {
        Ok(f) => panic!("{v} should be refused, parsed as {f:?}"),
        Err(e) => e,
    }
}

/// Checks a table of (filter, location, words the message contains).
fn refusals(rows: &[(Value, &str, &str)]) {
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(v, at, words)| {
            let e = refused(v);
            (e.at != *at || !e.message.contains(words))
                .then(|| format!("  {v}\n    gave {e}\n    wanted {at}: …{words}…"))
        })
        .collect();
    assert!(wrong.is_empty(), "wrong refusals:\n{}", wrong.join("\n"));
}

/// `inner` wrapped in `levels` nots.
fn nested(levels: usize, inner: Value) -> Value {
    (0..levels).fold(inner, |f, _| json!({"not": f}))
}

fn condition() -> Value {
    json!({"field": "data.customer_id", "eq": "cus_1"})
}

#[test]
fn the_shape_of_each_object_is_checked_where_it_is() {
    refusals(&[
        (json!("data.x"), "/", "must be an object"),
        (json!([condition()]), "/", "must be an object"),
        (json!({}), "/", "is empty"),
        (
            json!({"and": [{"field": "data.x", "eql": 1}]}),
            "/and/0/eql",
            "`eql` is not an operator",
        ),
        (
            json!({"field": "data.x", "eq": 1, "ne": 2}),
            "/ne",
            "second operator beside `eq`",
        ),
        (json!({"field": "data.x"}), "/", "has no operator"),
        (json!({"eq": 1}), "/", "has no `field`"),
        (json!({"field": 7, "eq": 1}), "/field", "must be a path"),
        (json!({"and": [], }), "/and", "at least one filter"),
        (
            json!({"or": [condition(), {"or": []}]}),
            "/or/1/or",
            "at least one filter",
        ),
        (json!({"and": condition()}), "/and", "must be an array"),
        (json!({"not": [condition()]}), "/not", "must be an object"),
        (
            json!({"and": [condition()], "field": "data.x"}),
            "/field",
            "beside `and`",
        ),
        (
            json!({"and": [condition()], "or": [condition()]}),
            "/or",
            "beside `and`",
        ),
        (
            json!({"field": "data.x", "a/b~": 1}),
            "/a~1b~0",
            "not an operator",
        ),
    ]);
}

#[test]
fn operands_of_the_wrong_kind_are_refused_at_the_operator() {
    refusals(&[
        (
            json!({"field": "data.x", "eq": {"a": 1}}),
            "/eq",
            "compare an object by its fields",
        ),
        (
            json!({"field": "data.x", "ne": [1]}),
            "/ne",
            "must be a string, a number",
        ),
        (
            json!({"field": "data.x", "in": "cus_1"}),
            "/in",
            "must be an array",
        ),
        (
            json!({"field": "data.x", "in": []}),
            "/in",
            "at least one value",
        ),
        (
            json!({"field": "data.x", "not_in": [1, [2]]}),
            "/not_in/1",
            "must be a string",
        ),
        (
            json!({"field": "data.x", "gt": "ten"}),
            "/gt",
            "must be a decimal",
        ),
        (
            json!({"field": "data.x", "gte": "+5"}),
            "/gte",
            "must be a decimal",
        ),
        (
            json!({"field": "data.x", "lt": ".5"}),
            "/lt",
            "must be a decimal",
        ),
        (
            json!({"field": "data.x", "lte": true}),
            "/lte",
            "must be a decimal",
        ),
        (
            json!({"field": "data.x", "exists": "yes"}),
            "/exists",
            "true or false",
        ),
        (
            json!({"field": "data.x", "prefix": 5}),
            "/prefix",
            "must be a string",
        ),
    ]);
}

#[test]
fn an_exponent_in_a_decimal_operand_is_refused() {
    refusals(&[
        (
            json!({"field": "data.x", "gt": "1.5e3"}),
            "/gt",
            "has an exponent",
        ),
        (
            json(r#"{"field": "data.x", "gt": 1.5e3}"#),
            "/gt",
            "has an exponent",
        ),
        (
            json(r#"{"field": "data.x", "eq": 1E3}"#),
            "/eq",
            "has an exponent",
        ),
        (
            json(r#"{"field": "data.x", "in": [1, 2e-1]}"#),
            "/in/1",
            "has an exponent",
        ),
    ]);
}

#[test]
fn paths_outside_the_envelope_are_refused_with_the_reason() {
    let at_field = |path: &str| json!({"and": [{"field": path, "exists": true}]});
    let long = format!("data.{}", "k".repeat(1020));
    let deep = format!("data{}", ".k".repeat(16));
    refusals(&[
        (
            at_field("partner_id"),
            "/and/0/field",
            "own partner's events",
        ),
        (
            at_field("event_id"),
            "/and/0/field",
            "every event has its own id",
        ),
        (
            at_field("occurred_at"),
            "/and/0/field",
            "`occurred_at` is not a field",
        ),
        (at_field(""), "/and/0/field", "is empty"),
        (at_field("data"), "/and/0/field", "name a field inside it"),
        (at_field("data..x"), "/and/0/field", "empty segment"),
        (at_field("data.x."), "/and/0/field", "empty segment"),
        (
            at_field("subject.version"),
            "/and/0/field",
            "subject.type and subject.id",
        ),
        (at_field("type.name"), "/and/0/field", "has no fields"),
        (
            at_field("Data.x"),
            "/and/0/field",
            "not a field of an event",
        ),
        (at_field("data.a\u{7}"), "/and/0/field", "control character"),
        (at_field(&long), "/and/0/field", "longer than 1024 bytes"),
        (at_field(&deep), "/and/0/field", "at most 16"),
    ]);
    let fifteen_keys = format!("data{}", ".k".repeat(15));
    assert!(Filter::parse(&json!({"field": fifteen_keys, "exists": true})).is_ok());
}

#[test]
fn bounds_on_depth_conditions_size_lists_and_strings() {
    let nine_deep = nested(8, condition());
    let nine_at = format!("/{}", ["not"; 8].join("/"));
    let sixty_five = json!({"and": vec![condition(); 65]});
    let big = json!({"field": "data.x", "in": vec!["c".repeat(40); 220]});
    let long = "x".repeat(1025);
    refusals(&[
        (nine_deep, &nine_at, "at most 8 levels"),
        (sixty_five, "/and/64", "at most 64"),
        (big, "/", "larger than 8 KiB"),
        (
            json!({"field": "data.x", "in": vec![1; 257]}),
            "/in",
            "at most 256",
        ),
        (
            json!({"field": "data.x", "eq": long}),
            "/eq",
            "longer than 1024 bytes",
        ),
        (
            json!({"field": "data.x", "in": [1, long]}),
            "/in/1",
            "longer than 1024",
        ),
        (
            json!({"field": "data.x", "prefix": long}),
            "/prefix",
            "longer than 1024",
        ),
    ]);
    for within in [
        nested(7, condition()),
        json!({"or": vec![condition(); 64]}),
        json!({"field": "data.x", "in": vec![1; 256]}),
        json!({"field": "data.x", "eq": "x".repeat(1024)}),
    ] {
        assert!(
            Filter::parse(&within).is_ok(),
            "within the bounds: {}",
            &within.to_string()[..80.min(within.to_string().len())]
        );
    }
}

#[test]
fn the_error_reads_location_then_message() {
    let e = refused(&json!({"or": [condition(), {"field": "partner_id", "eq": "p1"}]}));
    assert!(
        e.to_string()
            .starts_with("/or/1/field: `partner_id` cannot be filtered on"),
        "{e}"
    );
}
