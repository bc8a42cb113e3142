//! Payload filters: a partner's condition over an event's envelope, so an
//! endpoint receives only the events it wants (`balance.updated` for three
//! customers). A filter is JSON data, never code: parsed and bounded here
//! once, then evaluated as a total boolean. Pure; `docs/filters.md` is the
//! partner's guide.
//!
//! - `parse` refuses anything it does not understand, naming where in the
//!   filter (`/and/1/gt`) and what to change.
//! - `evaluate` gives `Matched`, or `Filtered` with a reason for a metric.
//!   Every condition is true or false for every event (a missing field is
//!   not an error), and `not` is its exact complement.
//! - Numbers compare exactly as decimals (`decimal`), never as floats.

mod decimal;
mod eval;
mod parse;
mod path;

pub use path::Path;

use self::decimal::Decimal;

/// The most `and`/`or`/`not` levels, counting a condition alone as 1.
pub const MAX_DEPTH: usize = 8;
/// The most conditions (`{"field": …}` objects) in one filter.
pub const MAX_CONDITIONS: usize = 64;
/// The most bytes of a filter as compact JSON.
pub const MAX_BYTES: usize = 8 * 1024;
/// The most values in an `in` or `not_in` list.
pub const MAX_LIST: usize = 256;
/// The most bytes of any string in a filter (paths and operands).
pub const MAX_STRING: usize = 1024;
/// The most dot-separated segments of a path (`data.limit.amount` has 3).
pub const MAX_SEGMENTS: usize = 16;

/// A parsed filter, within every bound above. Equal filters were written
/// alike (`1.0` and `1` are different operands that match the same events).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    root: Node,
}

/// Why a filter was refused: where in it (a JSON pointer into the filter,
/// `/` for the whole) and what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct FilterError {
    pub at: String,
    pub message: String,
}

/// What a filter sees of an event: its envelope without the partner (an
/// endpoint only ever gets its own partner's events) and without the id.
#[derive(Debug, Clone, Copy)]
pub struct EventView<'a> {
    pub event_type: &'a str,
    /// The subject's type and id, when the event has one.
    pub subject: Option<(&'a str, &'a str)>,
    pub data: &'a serde_json::Value,
}

/// Whether an event passes a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Matched,
    Filtered(FilterReason),
}

impl Verdict {
    pub fn is_match(self) -> bool {
        self == Verdict::Matched
    }
}

/// Why an event did not pass, for a metric's label. The reason is the one
/// of the condition that decided: in an `and`, the first that failed; in an
/// `or` (where every one failed), the first listed. `not` is pushed down to
/// the conditions (`not(and(a, b))` is `or(not a, not b)`), so the reason is
/// always a condition's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FilterReason {
    /// The field was there and the condition was false.
    NoMatch,
    /// The condition's field is not in the event.
    MissingField,
    /// An ordering or `prefix` condition met a value it cannot compare: a
    /// `gt` on a word, a `prefix` on a number.
    NotComparable,
}

impl FilterReason {
    /// Every reason, for whatever lists them all (the metrics' series).
    pub const ALL: [FilterReason; 3] = [
        FilterReason::NoMatch,
        FilterReason::MissingField,
        FilterReason::NotComparable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FilterReason::NoMatch => "no_match",
            FilterReason::MissingField => "missing_field",
            FilterReason::NotComparable => "not_comparable",
        }
    }
}

impl Filter {
    /// Parses and bounds a filter given as JSON (see `docs/filters.md`).
    pub fn parse(v: &serde_json::Value) -> Result<Filter, FilterError> {
        parse::filter(v).map(|root| Filter { root })
    }

    /// The filter as JSON, operands as they were written: `parse` gives
    /// back an equal filter.
    pub fn to_json(&self) -> serde_json::Value {
        parse::to_json(&self.root)
    }

    /// Every condition's path with the location of its `field` in the
    /// filter (`/and/1/field`), in the order written.
    pub fn paths(&self) -> Vec<(String, &Path)> {
        let mut out = Vec::new();
        collect_paths(&self.root, String::new(), &mut out);
        out
    }

    /// Whether the event passes, and if not, why.
    pub fn evaluate(&self, e: &EventView<'_>) -> Verdict {
        match eval::node(&self.root, e, false) {
            Ok(()) => Verdict::Matched,
            Err(reason) => Verdict::Filtered(reason),
        }
    }
}

/// One node of a filter.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Condition(Condition),
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
}

/// `{"field": <path>, <op>: <operand>}`.
#[derive(Debug, Clone, PartialEq)]
struct Condition {
    path: Path,
    op: Op,
}

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq(Scalar),
    Ne(Scalar),
    In(Vec<Scalar>),
    NotIn(Vec<Scalar>),
    Compare(Order, Bound),
    Exists(bool),
    Prefix(String),
}

/// The ordering operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Gt,
    Gte,
    Lt,
    Lte,
}

/// An `eq`/`ne`/`in`/`not_in` operand.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Null,
    Bool(bool),
    Text(String),
    Number(Bound),
}

/// A decimal operand: its exact value and how it was written (a JSON
/// number or a decimal string), which `to_json` gives back.
#[derive(Debug, Clone, PartialEq)]
struct Bound {
    value: Decimal,
    written: serde_json::Value,
}

fn collect_paths<'f>(node: &'f Node, at: String, out: &mut Vec<(String, &'f Path)>) {
    match node {
        Node::Condition(c) => out.push((format!("{at}/field"), &c.path)),
        Node::And(children) | Node::Or(children) => {
            let key = if matches!(node, Node::And(_)) {
                "and"
            } else {
                "or"
            };
            for (i, child) in children.iter().enumerate() {
                collect_paths(child, format!("{at}/{key}/{i}"), out);
            }
        }
        Node::Not(child) => collect_paths(child, format!("{at}/not"), out),
    }
}

#[cfg(test)]
mod tests;
