//! Evaluating a filter on one event. Every condition is a total boolean (a
//! missing field or a value of another type makes it false or true, never
//! an error), and `not` is pushed down to the conditions, so a filter and
//! its `not` never both match nor both fail, and the reason for a failure
//! is always one condition's.

use serde_json::Value;

use super::{
    Condition, EventView, FilterReason, Node, Op, Order, Scalar, decimal::Decimal, path::Found,
};

/// Whether `node`, negated when `negated`, passes `e`; if not, why.
pub(super) fn node(n: &Node, e: &EventView<'_>, negated: bool) -> Result<(), FilterReason> {
    match (n, negated) {
        (Node::Condition(c), _) => {
            let (holds, reason) = condition(c, e);
            if holds != negated {
                Ok(())
            } else {
                Err(reason)
            }
        }
        (Node::Not(inner), _) => node(inner, e, !negated),
        // Every child must pass: the first that fails gives the reason.
        (Node::And(children), false) | (Node::Or(children), true) => {
            children.iter().try_for_each(|c| node(c, e, negated))
        }
        // One child passing is enough; when none does, the first gives
        // the reason.
        (Node::Or(children), false) | (Node::And(children), true) => {
            let mut first = None;
            for c in children {
                match node(c, e, negated) {
                    Ok(()) => return Ok(()),
                    Err(reason) => {
                        first.get_or_insert(reason);
                    }
                }
            }
            // Parsing refuses an empty and/or, so a reason was seen.
            Err(first.unwrap_or(FilterReason::NoMatch))
        }
    }
}

/// Whether the condition holds on `e`, and the reason it gives when that
/// is not the outcome wanted: `MissingField` when the field is absent,
/// `NotComparable` when an ordering or `prefix` met a value of another
/// kind, `NoMatch` otherwise.
fn condition(c: &Condition, e: &EventView<'_>) -> (bool, FilterReason) {
    let Some(found) = c.path.find(e) else {
        // An absent field equals nothing, so it is "not equal" and "not
        // in" anything; it only exists for `exists: false`.
        let holds = matches!(c.op, Op::Ne(_) | Op::NotIn(_) | Op::Exists(false));
        return (holds, FilterReason::MissingField);
    };
    let plain = |holds: bool| (holds, FilterReason::NoMatch);
    match &c.op {
        Op::Eq(s) => plain(equals(found, s)),
        Op::Ne(s) => plain(!equals(found, s)),
        Op::In(list) => plain(list.iter().any(|s| equals(found, s))),
        Op::NotIn(list) => plain(!list.iter().any(|s| equals(found, s))),
        Op::Exists(wanted) => plain(*wanted),
        Op::Compare(order, bound) => match decimal(found) {
            Some(value) => plain(order.holds(value.cmp(&bound.value))),
            None => (false, FilterReason::NotComparable),
        },
        Op::Prefix(prefix) => match text(found) {
            Some(s) => plain(s.starts_with(prefix.as_str())),
            None => (false, FilterReason::NotComparable),
        },
    }
}

/// The `eq` rule: a string equals the same string; a number equals a
/// number or a decimal string of the same value; `true`, `false` and
/// `null` equal themselves.
fn equals(found: Found<'_>, s: &Scalar) -> bool {
    match s {
        Scalar::Text(t) => text(found) == Some(t.as_str()),
        Scalar::Number(b) => decimal(found).is_some_and(|v| v == b.value),
        Scalar::Bool(b) => matches!(found, Found::Json(Value::Bool(v)) if v == b),
        Scalar::Null => matches!(found, Found::Json(Value::Null)),
    }
}

fn text(found: Found<'_>) -> Option<&str> {
    match found {
        Found::Text(t) => Some(t),
        Found::Json(Value::String(t)) => Some(t),
        Found::Json(_) => None,
    }
}

/// The value as a decimal: a JSON number (an exponent too) or a plain
/// decimal string (`"10.50"`); anything else is not comparable.
fn decimal(found: Found<'_>) -> Option<Decimal> {
    match found {
        Found::Json(Value::Number(n)) => Decimal::parse_number(&n.to_string()),
        other => text(other).and_then(Decimal::parse_plain),
    }
}

impl Order {
    /// Whether a value that compares to the bound as given passes.
    fn holds(self, value_to_bound: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Greater, Less};
        match self {
            Order::Gt => value_to_bound == Greater,
            Order::Gte => value_to_bound != Less,
            Order::Lt => value_to_bound == Less,
            Order::Lte => value_to_bound != Greater,
        }
    }
}
