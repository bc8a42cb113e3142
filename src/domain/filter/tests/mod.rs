//! Filters as a partner writes them: what each operator matches, what is
//! refused and where, and the properties every filter keeps (`not` is the
//! exact complement; `to_json` round-trips).

use serde_json::Value;

use super::*;

mod operators;
mod props;
mod refusals;

/// JSON read from text, so numbers keep their digits (`0.10`, `1.5e3`).
fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn filter(text: &str) -> Filter {
    Filter::parse(&json(text)).unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
}

/// The verdict of `filter` on a `balance.updated` event about
/// `customer`/`cus_1` with `data`.
fn verdict(filter_text: &str, data: &str) -> Verdict {
    let data = json(data);
    filter(filter_text).evaluate(&EventView {
        event_type: "balance.updated",
        subject: Some(("customer", "cus_1")),
        data: &data,
    })
}

const MATCHED: Verdict = Verdict::Matched;
const NO_MATCH: Verdict = Verdict::Filtered(FilterReason::NoMatch);
const MISSING: Verdict = Verdict::Filtered(FilterReason::MissingField);
const NOT_COMPARABLE: Verdict = Verdict::Filtered(FilterReason::NotComparable);

/// Checks a table of (filter, data, verdict), naming each row that fails.
fn table(rows: &[(&str, &str, Verdict)]) {
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(f, data, expected)| {
            let got = verdict(f, data);
            (got != *expected).then(|| format!("  {f} on {data}: {got:?}, not {expected:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

#[test]
fn to_json_gives_back_the_operands_as_written() {
    let text = r#"{"and": [{"field": "data.balance", "gte": "10.00"},
                          {"field": "data.balance", "lt": 0.10},
                          {"not": {"field": "data.customer_id", "in": ["cus_1", 7, true, null]}},
                          {"or": [{"field": "subject.id", "prefix": "cus_"},
                                  {"field": "type", "exists": false}]}]}"#;
    let f = filter(text);
    assert_eq!(f.to_json(), json(text), "the JSON is the one given");
    assert_eq!(
        f.to_json()["and"][1]["lt"].to_string(),
        "0.10",
        "a number keeps its digits"
    );
    assert_eq!(Filter::parse(&f.to_json()), Ok(f));
}

#[test]
fn paths_lists_each_condition_with_the_location_of_its_field() {
    let f = filter(
        r#"{"or": [{"field": "type", "eq": "balance.updated"},
                   {"not": {"and": [{"field": "data.limit.amount", "gt": 1}]}}]}"#,
    );
    let paths: Vec<(String, String)> = f
        .paths()
        .into_iter()
        .map(|(at, p)| (at, p.to_string()))
        .collect();
    assert_eq!(
        paths,
        [
            ("/or/0/field".to_string(), "type".to_string()),
            (
                "/or/1/not/and/0/field".to_string(),
                "data.limit.amount".to_string()
            ),
        ]
    );
    assert_eq!(
        f.paths()[1].1.data_keys(),
        Some(&["limit".to_string(), "amount".to_string()][..])
    );
}

#[test]
fn reasons_have_stable_metric_labels() {
    let labels: Vec<&str> = FilterReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(labels, ["no_match", "missing_field", "not_comparable"]);
}
