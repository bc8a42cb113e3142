//! Properties over generated filters and events: a filter and its `not`
//! never agree, `to_json` round-trips, and comparisons agree with integers.

use proptest::prelude::*;
use serde_json::{Map, Number, json};

use super::*;

fn number(text: &str) -> Value {
    Value::Number(
        text.parse::<Number>()
            .unwrap_or_else(|e| panic!("{text}: {e}")),
    )
}

/// Decimals as a partner may write them in a filter (`007` only as a
/// string: JSON numbers have no leading zeros).
const DECIMALS: [&str; 7] = ["10.5", "-3", "0", "0.10", "7", "1", "123456789012345678901"];

/// Values as producers send them, some alike in value and unlike in form.
fn data_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec!["cus_1", "cus_2", "10.50", "-3", "1e1", "x", ""])
            .prop_map(|s| Value::String(s.into())),
        prop::sample::select(vec!["10.5", "1.05e1", "-3", "0", "0.1", "1", "7"]).prop_map(number),
    ];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|v| json!({"d": v})),
            prop::collection::vec(inner, 1..3).prop_map(Value::Array),
        ]
    })
}

/// An event: a type, maybe a subject, and up to three fields of data.
#[derive(Debug, Clone)]
struct Event {
    event_type: &'static str,
    subject: Option<(&'static str, &'static str)>,
    data: Value,
}

impl Event {
    fn view(&self) -> EventView<'_> {
        EventView {
            event_type: self.event_type,
            subject: self.subject,
            data: &self.data,
        }
    }
}

fn event() -> impl Strategy<Value = Event> {
    let field = || proptest::option::of(data_value());
    (
        prop::sample::select(vec!["balance.updated", "usage.finalized"]),
        proptest::option::of(prop::sample::select(vec![
            ("customer", "cus_1"),
            ("customer", "cus_2"),
        ])),
        (field(), field(), field()),
    )
        .prop_map(|(event_type, subject, (a, b, c))| {
            let mut data = Map::new();
            for (key, v) in [("a", a), ("b", b), ("c", c)] {
                if let Some(v) = v {
                    data.insert(key.into(), v);
                }
            }
            Event {
                event_type,
                subject,
                data: Value::Object(data),
            }
        })
}

fn operand() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec!["cus_1", "10.50", "-3", "balance.updated", "customer"])
            .prop_map(|s| Value::String(s.into())),
        prop::sample::select(DECIMALS.to_vec()).prop_map(number),
    ]
}

fn bound() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(DECIMALS.to_vec()).prop_map(number),
        prop::sample::select(DECIMALS.to_vec()).prop_map(|d| Value::String(d.into())),
        Just(Value::String("007".into())),
    ]
}

fn condition() -> impl Strategy<Value = Value> {
    let path = prop::sample::select(vec![
        "type",
        "subject.type",
        "subject.id",
        "data.a",
        "data.b",
        "data.c.d",
        "data.b.0",
        "data.none",
    ]);
    let op = prop_oneof![
        (prop::sample::select(vec!["eq", "ne"]), operand()),
        (
            prop::sample::select(vec!["in", "not_in"]),
            prop::collection::vec(operand(), 1..4).prop_map(Value::Array)
        ),
        (
            prop::sample::select(vec!["gt", "gte", "lt", "lte"]),
            bound()
        ),
        (Just("exists"), any::<bool>().prop_map(Value::Bool)),
        (
            Just("prefix"),
            prop::sample::select(vec!["cus_", "1", "balance.", ""])
                .prop_map(|s| Value::String(s.into()))
        ),
    ];
    (path, op).prop_map(|(path, (name, operand))| {
        let mut c = Map::new();
        c.insert("field".into(), Value::String(path.into()));
        c.insert(name.into(), operand);
        Value::Object(c)
    })
}

/// Filters up to 4 levels deep with at most 27 conditions, so that their
/// `not` is within the bounds too.
fn filter_json() -> impl Strategy<Value = Value> {
    condition().prop_recursive(3, 64, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"and": v})),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"or": v})),
            inner.prop_map(|f| json!({"not": f})),
        ]
    })
}

fn parsed(v: &Value) -> Filter {
    Filter::parse(v).unwrap_or_else(|e| panic!("a generated filter should parse: {e}\n{v}"))
}

/// `value / 10^scale` as a decimal string.
fn decimal_text(value: i64, scale: u32) -> String {
    let digits = format!(
        "{:0>width$}",
        value.unsigned_abs(),
        width = scale as usize + 1
    );
    let (whole, fraction) = digits.split_at(digits.len() - scale as usize);
    let sign = if value < 0 { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn exactly_one_of_a_filter_and_its_not_matches(f in filter_json(), e in event()) {
        let (yes, no) = (parsed(&f), parsed(&json!({"not": f})));
        let (a, b) = (yes.evaluate(&e.view()), no.evaluate(&e.view()));
        prop_assert!(a.is_match() != b.is_match(), "{f} gives {a:?}, its not {b:?} on {e:?}");
    }

    #[test]
    fn to_json_gives_back_the_filter_as_written_and_parses_to_it(f in filter_json()) {
        let filter = parsed(&f);
        prop_assert_eq!(&filter.to_json(), &f);
        prop_assert_eq!(Filter::parse(&filter.to_json()), Ok(filter));
    }

    #[test]
    fn comparisons_agree_with_scaled_integers(
        bound in -10i64.pow(15)..10i64.pow(15), bound_scale in 0u32..7,
        value in -10i64.pow(15)..10i64.pow(15), value_scale in 0u32..7,
        as_number in any::<bool>(),
    ) {
        let scaled = |v: i64, s: u32| i128::from(v) * 10i128.pow(6 - s);
        let expected = scaled(value, value_scale).cmp(&scaled(bound, bound_scale));
        let text = decimal_text(value, value_scale);
        let data = if as_number { number(&text) } else { Value::String(text.clone()) };
        let data = json!({"a": data});
        let e = EventView { event_type: "t.t", subject: None, data: &data };
        for (op, holds) in [
            ("gt", expected.is_gt()), ("gte", expected.is_ge()),
            ("lt", expected.is_lt()), ("lte", expected.is_le()),
            ("eq", expected.is_eq()), ("ne", expected.is_ne()),
        ] {
            let f = json!({"field": "data.a", op: number(&decimal_text(bound, bound_scale))});
            prop_assert_eq!(parsed(&f).evaluate(&e).is_match(), holds, "{} {} {}", text, op, f);
        }
    }
}
