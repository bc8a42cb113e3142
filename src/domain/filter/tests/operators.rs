//! What each operator matches: present, missing and mistyped fields,
//! decimals of every shape, and the reason a filter gives.

use super::*;

#[test]
fn eq_compares_strings_as_strings_and_numbers_as_decimals() {
    let id = r#"{"field": "data.customer_id", "eq": "cus_1"}"#;
    let tenth = r#"{"field": "data.balance", "eq": 0.1}"#;
    table(&[
        (id, r#"{"customer_id": "cus_1"}"#, MATCHED),
        (id, r#"{"customer_id": "cus_2"}"#, NO_MATCH),
        (id, r#"{"customer_id": 1}"#, NO_MATCH),
        (id, r#"{}"#, MISSING),
        (tenth, r#"{"balance": "0.10"}"#, MATCHED),
        (tenth, r#"{"balance": 0.1}"#, MATCHED),
        (tenth, r#"{"balance": 0.100}"#, MATCHED),
        (tenth, r#"{"balance": 1e-1}"#, MATCHED),
        (tenth, r#"{"balance": "0.11"}"#, NO_MATCH),
        (tenth, r#"{"balance": "a tenth"}"#, NO_MATCH),
        (tenth, r#"{"balance": {"amount": "0.1"}}"#, NO_MATCH),
        (
            r#"{"field": "data.balance", "eq": "10.5"}"#,
            r#"{"balance": "10.50"}"#,
            NO_MATCH,
        ),
        (
            r#"{"field": "data.balance", "eq": "10.5"}"#,
            r#"{"balance": 10.5}"#,
            NO_MATCH,
        ),
        (
            r#"{"field": "data.balance", "eq": "-0"}"#,
            r#"{"balance": 0}"#,
            NO_MATCH,
        ),
        (
            r#"{"field": "data.balance", "eq": -0}"#,
            r#"{"balance": "0.000"}"#,
            MATCHED,
        ),
        (
            r#"{"field": "data.flag", "eq": true}"#,
            r#"{"flag": true}"#,
            MATCHED,
        ),
        (
            r#"{"field": "data.flag", "eq": true}"#,
            r#"{"flag": "true"}"#,
            NO_MATCH,
        ),
        (
            r#"{"field": "data.reason", "eq": null}"#,
            r#"{"reason": null}"#,
            MATCHED,
        ),
        (r#"{"field": "data.reason", "eq": null}"#, r#"{}"#, MISSING),
    ]);
}

#[test]
fn ne_and_not_in_hold_for_everything_eq_and_in_do_not_even_a_missing_field() {
    let ne = r#"{"field": "data.customer_id", "ne": "cus_1"}"#;
    let not_in = r#"{"field": "data.balance", "not_in": ["1.5", 2]}"#;
    table(&[
        (ne, r#"{"customer_id": "cus_2"}"#, MATCHED),
        (ne, r#"{"customer_id": "cus_1"}"#, NO_MATCH),
        (ne, r#"{"customer_id": null}"#, MATCHED),
        (ne, r#"{}"#, MATCHED),
        (not_in, r#"{"balance": "1.5"}"#, NO_MATCH),
        (not_in, r#"{"balance": "2.00"}"#, NO_MATCH),
        (not_in, r#"{"balance": "1.50"}"#, MATCHED),
        (not_in, r#"{}"#, MATCHED),
    ]);
}

#[test]
fn in_is_membership_by_the_eq_rule() {
    let three = r#"{"field": "data.customer_id", "in": ["cus_1", "cus_7", "cus_204"]}"#;
    let amounts = r#"{"field": "data.balance", "in": [0, 10.5, "10.5"]}"#;
    table(&[
        (three, r#"{"customer_id": "cus_204"}"#, MATCHED),
        (three, r#"{"customer_id": "cus_2"}"#, NO_MATCH),
        (three, r#"{}"#, MISSING),
        (amounts, r#"{"balance": "10.500"}"#, MATCHED),
        (amounts, r#"{"balance": "-0.0"}"#, MATCHED),
        (amounts, r#"{"balance": "10.51"}"#, NO_MATCH),
    ]);
}

#[test]
fn comparisons_are_exact_on_decimal_strings_and_numbers() {
    let rows: &[(&str, &str, &str, bool)] = &[
        // operator, operand, value in data, holds
        ("gte", r#""0.1""#, r#""0.10""#, true),
        ("lte", r#""0.1""#, r#""0.10""#, true),
        ("gt", r#""0.1""#, r#""0.10""#, false),
        ("lt", r#""0.1""#, r#""0.10""#, false),
        ("gt", "0.3", r#""0.30000000000000004""#, true),
        ("lt", "0.3", r#""0.29999999999999999""#, true),
        ("gt", r#""-3""#, r#""-2.5""#, true),
        ("lt", r#""-3""#, r#""-10""#, true),
        ("lt", "0", r#""-0.000001""#, true),
        ("gte", "0", r#""-0""#, true),
        ("gt", "7", r#""007.5""#, true),
        ("lt", "10", r#""007.5""#, true),
        (
            "gt",
            r#""18446744073709551615""#,
            "18446744073709551616",
            true,
        ),
        ("lt", r#""9007199254740993""#, "9007199254740992", true),
        ("gt", r#""9007199254740992""#, "9007199254740993", true),
        (
            "lt",
            r#""123456789012345678901234567890.000000000000000000002""#,
            r#""123456789012345678901234567890.000000000000000000001""#,
            true,
        ),
        ("gte", "1500", "1.5e3", true),
        ("gt", "1500", "1.5e3", false),
        ("lt", "0.01", "1E-3", true),
        ("gte", r#""10.00""#, "10", true),
    ];
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(op, operand, value, holds)| {
            let f = format!(r#"{{"field": "data.balance", "{op}": {operand}}}"#);
            let data = format!(r#"{{"balance": {value}}}"#);
            let expected = if *holds { MATCHED } else { NO_MATCH };
            let got = verdict(&f, &data);
            (got != expected).then(|| format!("  {value} {op} {operand}: {got:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "wrong comparisons:\n{}", wrong.join("\n"));
}

#[test]
fn a_comparison_with_a_value_that_is_not_a_decimal_is_not_comparable() {
    let gt = r#"{"field": "data.balance", "gt": "10"}"#;
    table(&[
        (gt, r#"{"balance": "ten"}"#, NOT_COMPARABLE),
        (gt, r#"{"balance": "1e3"}"#, NOT_COMPARABLE),
        (gt, r#"{"balance": " 11"}"#, NOT_COMPARABLE),
        (gt, r#"{"balance": true}"#, NOT_COMPARABLE),
        (gt, r#"{"balance": null}"#, NOT_COMPARABLE),
        (gt, r#"{"balance": ["11"]}"#, NOT_COMPARABLE),
        (gt, r#"{"balance": 1e99999999999999999999}"#, NOT_COMPARABLE),
        (gt, r#"{}"#, MISSING),
        (r#"{"field": "type", "lt": 1}"#, r#"{}"#, NOT_COMPARABLE),
    ]);
}

#[test]
fn exists_asks_whether_the_field_is_there_even_as_null() {
    let there = r#"{"field": "data.previous_balance", "exists": true}"#;
    let absent = r#"{"field": "data.previous_balance", "exists": false}"#;
    table(&[
        (there, r#"{"previous_balance": "1"}"#, MATCHED),
        (there, r#"{"previous_balance": null}"#, MATCHED),
        (there, r#"{}"#, MISSING),
        (absent, r#"{}"#, MATCHED),
        (absent, r#"{"previous_balance": null}"#, NO_MATCH),
    ]);
}

#[test]
fn prefix_matches_the_start_of_a_string_only() {
    let cus = r#"{"field": "data.customer_id", "prefix": "cus_"}"#;
    table(&[
        (cus, r#"{"customer_id": "cus_204"}"#, MATCHED),
        (cus, r#"{"customer_id": "cus_"}"#, MATCHED),
        (cus, r#"{"customer_id": "acus_1"}"#, NO_MATCH),
        (cus, r#"{"customer_id": "CUS_1"}"#, NO_MATCH),
        (cus, r#"{"customer_id": 204}"#, NOT_COMPARABLE),
        (cus, r#"{}"#, MISSING),
        (
            r#"{"field": "type", "prefix": "balance."}"#,
            r#"{}"#,
            MATCHED,
        ),
    ]);
}

#[test]
fn paths_reach_the_envelope_nested_objects_and_array_items() {
    table(&[
        (
            r#"{"field": "type", "eq": "balance.updated"}"#,
            "{}",
            MATCHED,
        ),
        (
            r#"{"field": "subject.type", "eq": "customer"}"#,
            "{}",
            MATCHED,
        ),
        (r#"{"field": "subject.id", "in": ["cus_1"]}"#, "{}", MATCHED),
        (
            r#"{"field": "data.limit.amount", "gte": 100}"#,
            r#"{"limit": {"amount": "100.00"}}"#,
            MATCHED,
        ),
        (
            r#"{"field": "data.limit.amount", "gte": 100}"#,
            r#"{"limit": "100.00"}"#,
            MISSING,
        ),
        (
            r#"{"field": "data.items.1.id", "eq": "b"}"#,
            r#"{"items": [{"id": "a"}, {"id": "b"}]}"#,
            MATCHED,
        ),
        (
            r#"{"field": "data.items.2.id", "eq": "b"}"#,
            r#"{"items": [{"id": "a"}, {"id": "b"}]}"#,
            MISSING,
        ),
        (
            r#"{"field": "data.items.01.id", "eq": "b"}"#,
            r#"{"items": [{"id": "a"}, {"id": "b"}]}"#,
            MISSING,
        ),
        (
            r#"{"field": "data.by_year.2024", "eq": 1}"#,
            r#"{"by_year": {"2024": 1}}"#,
            MATCHED,
        ),
    ]);
    let data = json("{}");
    let no_subject = EventView {
        event_type: "usage.finalized",
        subject: None,
        data: &data,
    };
    assert_eq!(
        filter(r#"{"field": "subject.id", "eq": "cus_1"}"#).evaluate(&no_subject),
        MISSING
    );
    assert_eq!(
        filter(r#"{"field": "subject.id", "exists": false}"#).evaluate(&no_subject),
        MATCHED
    );
}

#[test]
fn a_failing_and_gives_the_reason_of_its_first_failing_condition() {
    let f = r#"{"and": [{"field": "data.customer_id", "eq": "cus_1"},
                        {"field": "data.balance", "gt": 5},
                        {"field": "data.missing", "exists": true}]}"#;
    table(&[
        (
            f,
            r#"{"customer_id": "cus_1", "balance": "6", "missing": 1}"#,
            MATCHED,
        ),
        (
            f,
            r#"{"customer_id": "cus_1", "balance": "x"}"#,
            NOT_COMPARABLE,
        ),
        (f, r#"{"customer_id": "cus_1", "balance": "6"}"#, MISSING),
        (f, r#"{"customer_id": "cus_2"}"#, NO_MATCH),
    ]);
}

#[test]
fn a_failing_or_gives_the_reason_of_its_first_condition() {
    let f = r#"{"or": [{"field": "data.threshold", "lt": 0},
                       {"field": "data.customer_id", "eq": "cus_1"}]}"#;
    table(&[
        (f, r#"{"customer_id": "cus_1"}"#, MATCHED),
        (f, r#"{"customer_id": "cus_2"}"#, MISSING),
        (f, r#"{"threshold": "5", "customer_id": "cus_2"}"#, NO_MATCH),
        (f, r#"{"threshold": "five"}"#, NOT_COMPARABLE),
    ]);
}

#[test]
fn not_is_pushed_down_so_the_reason_is_a_conditions() {
    table(&[
        (
            r#"{"not": {"field": "data.customer_id", "eq": "cus_1"}}"#,
            r#"{"customer_id": "cus_1"}"#,
            NO_MATCH,
        ),
        (
            r#"{"not": {"field": "data.customer_id", "eq": "cus_1"}}"#,
            r#"{}"#,
            MATCHED,
        ),
        (
            r#"{"not": {"field": "data.customer_id", "ne": "cus_1"}}"#,
            r#"{}"#,
            MISSING,
        ),
        (
            r#"{"not": {"field": "data.balance", "gt": 1}}"#,
            r#"{"balance": "x"}"#,
            MATCHED,
        ),
        // not(a or b) = not a and not b: the first condition that holds decides.
        (
            r#"{"not": {"or": [{"field": "data.a", "exists": false},
                               {"field": "data.b", "eq": 1}]}}"#,
            r#"{"a": 0, "b": 1}"#,
            NO_MATCH,
        ),
        (
            r#"{"not": {"or": [{"field": "data.a", "exists": false},
                               {"field": "data.b", "eq": 1}]}}"#,
            r#"{"b": 2}"#,
            MISSING,
        ),
        (
            r#"{"not": {"not": {"field": "data.a", "eq": 1}}}"#,
            r#"{}"#,
            MISSING,
        ),
    ]);
}
