//! Reading a filter from JSON, within every bound, and writing it back as
//! written. Anything not understood is refused at its JSON pointer: an
//! unknown key, a second operator, an operand of the wrong kind.

use std::io;

use serde_json::{Map, Value};

use super::{
    Bound, Condition, FilterError, MAX_BYTES, MAX_CONDITIONS, MAX_DEPTH, MAX_LIST, MAX_STRING,
    Node, Op, Order, Path, Scalar, decimal::Decimal,
};

/// Every operator, in the order the docs list them.
const OPERATORS: [&str; 10] = [
    "eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "exists", "prefix",
];

const SHAPE: &str = "a filter is a condition {\"field\": \"data.customer_id\", \"eq\": \"cus_1\"}, \
                     or {\"and\": [...]}, {\"or\": [...]} or {\"not\": {...}}";

const NOT_DECIMAL: &str =
    "must be a decimal: a string like \"10.50\" or \"-3\", or a JSON number like 10.5";

/// The filter's tree; `at` of every error is a pointer into `v`.
pub(super) fn filter(v: &Value) -> Result<Node, FilterError> {
    if !fits(v, MAX_BYTES) {
        return Err(error(
            "",
            format!(
                "the filter is larger than {} KiB as compact JSON; an `in` list is shorter than many `eq`s",
                MAX_BYTES / 1024
            ),
        ));
    }
    let mut conditions = 0;
    node(v, "", 1, &mut conditions)
}

fn error(at: &str, message: impl Into<String>) -> FilterError {
    FilterError {
        at: if at.is_empty() { "/".into() } else { at.into() },
        message: message.into(),
    }
}

/// The pointer to `key` inside the object at `at`.
fn child(at: &str, key: &str) -> String {
    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"))
}

fn node(v: &Value, at: &str, depth: usize, conditions: &mut usize) -> Result<Node, FilterError> {
    if depth > MAX_DEPTH {
        return Err(error(
            at,
            format!(
                "is nested too deep: at most {MAX_DEPTH} levels, counting each and, or, not and the condition itself"
            ),
        ));
    }
    let fields = match v {
        Value::Object(fields) if !fields.is_empty() => fields,
        Value::Object(_) => return Err(error(at, format!("is empty; {SHAPE}"))),
        _ => return Err(error(at, format!("must be an object; {SHAPE}"))),
    };
    if let Some(name) = ["and", "or", "not"]
        .into_iter()
        .find(|k| fields.contains_key(*k))
    {
        if let Some(extra) = fields.keys().find(|k| k.as_str() != name) {
            return Err(error(
                &child(at, extra),
                format!(
                    "cannot stand beside `{name}`: an object is one condition, or one and, or, not"
                ),
            ));
        }
        return combination(name, &fields[name], &child(at, name), depth, conditions);
    }
    *conditions += 1;
    if *conditions > MAX_CONDITIONS {
        return Err(error(
            at,
            format!("is one condition too many: a filter has at most {MAX_CONDITIONS}"),
        ));
    }
    condition(fields, at).map(Node::Condition)
}

fn combination(
    name: &str,
    v: &Value,
    at: &str,
    depth: usize,
    conditions: &mut usize,
) -> Result<Node, FilterError> {
    if name == "not" {
        return Ok(Node::Not(Box::new(node(v, at, depth + 1, conditions)?)));
    }
    let items = match v {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => return Err(error(at, "must list at least one filter")),
        _ => return Err(error(at, "must be an array of filters")),
    };
    let children = items
        .iter()
        .enumerate()
        .map(|(i, item)| node(item, &format!("{at}/{i}"), depth + 1, conditions))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(if name == "and" {
        Node::And(children)
    } else {
        Node::Or(children)
    })
}

fn condition(fields: &Map<String, Value>, at: &str) -> Result<Condition, FilterError> {
    let operators = OPERATORS.join(", ");
    if let Some(unknown) = fields
        .keys()
        .find(|k| k.as_str() != "field" && !OPERATORS.contains(&k.as_str()))
    {
        return Err(error(
            &child(at, unknown),
            format!(
                "`{unknown}` is not an operator; a condition has `field` and one of {operators}"
            ),
        ));
    }
    let given: Vec<&String> = fields.keys().filter(|k| k.as_str() != "field").collect();
    let name = match given.as_slice() {
        [] => {
            return Err(error(
                at,
                format!("has no operator: add one of {operators}"),
            ));
        }
        [one] => one.as_str(),
        [first, second, ..] => {
            return Err(error(
                &child(at, second),
                format!(
                    "is a second operator beside `{first}`: a condition has one; combine conditions with and"
                ),
            ));
        }
    };
    let field_at = child(at, "field");
    let path = match fields.get("field") {
        Some(Value::String(text)) => Path::parse(text).map_err(|m| error(&field_at, m))?,
        Some(_) => {
            return Err(error(
                &field_at,
                "must be a path as a string, like \"data.customer_id\"",
            ));
        }
        None => {
            return Err(error(
                at,
                "has no `field`: name the value to test, like \"data.customer_id\"",
            ));
        }
    };
    let op = operator(name, &fields[name], &child(at, name))?;
    Ok(Condition { path, op })
}

fn operator(name: &str, v: &Value, at: &str) -> Result<Op, FilterError> {
    if let Some(order) = Order::named(name) {
        return bound(v, at).map(|b| Op::Compare(order, b));
    }
    Ok(match name {
        "eq" => Op::Eq(scalar(v, at)?),
        "ne" => Op::Ne(scalar(v, at)?),
        "in" => Op::In(list(v, at)?),
        "not_in" => Op::NotIn(list(v, at)?),
        "exists" => match v {
            Value::Bool(b) => Op::Exists(*b),
            _ => return Err(error(at, "must be true or false")),
        },
        "prefix" => match v {
            Value::String(s) => Op::Prefix(short(s, at)?),
            _ => return Err(error(at, "must be a string")),
        },
        _ => return Err(error(at, "is not an operator")),
    })
}

fn short(s: &str, at: &str) -> Result<String, FilterError> {
    if s.len() > MAX_STRING {
        return Err(error(
            at,
            format!("is longer than {MAX_STRING} bytes; use prefix for a long value"),
        ));
    }
    Ok(s.to_string())
}

fn scalar(v: &Value, at: &str) -> Result<Scalar, FilterError> {
    match v {
        Value::Null => Ok(Scalar::Null),
        Value::Bool(b) => Ok(Scalar::Bool(*b)),
        Value::String(s) => short(s, at).map(Scalar::Text),
        Value::Number(_) => bound(v, at).map(Scalar::Number),
        Value::Array(_) | Value::Object(_) => Err(error(
            at,
            "must be a string, a number, true, false or null; compare an object by its fields (data.limit.amount)",
        )),
    }
}

fn list(v: &Value, at: &str) -> Result<Vec<Scalar>, FilterError> {
    let items = match v {
        Value::Array(items) if items.is_empty() => {
            return Err(error(at, "must list at least one value"));
        }
        Value::Array(items) if items.len() > MAX_LIST => {
            return Err(error(
                at,
                format!("lists {} values; at most {MAX_LIST}", items.len()),
            ));
        }
        Value::Array(items) => items,
        _ => {
            return Err(error(
                at,
                "must be an array of values, like [\"cus_1\", \"cus_2\"]",
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| scalar(item, &format!("{at}/{i}")))
        .collect()
}

/// A decimal operand: a plain decimal string or a JSON number written
/// without an exponent.
fn bound(v: &Value, at: &str) -> Result<Bound, FilterError> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => return Err(error(at, NOT_DECIMAL)),
    };
    if text.len() > MAX_STRING {
        return Err(error(at, format!("is longer than {MAX_STRING} bytes")));
    }
    if let Some(value) = Decimal::parse_plain(&text) {
        return Ok(Bound {
            value,
            written: v.clone(),
        });
    }
    let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
    if text.contains(['e', 'E']) && Decimal::parse_plain(mantissa).is_some() {
        return Err(error(
            at,
            format!("`{text}` has an exponent: write the number out, like 1500 for 1.5e3"),
        ));
    }
    Err(error(at, NOT_DECIMAL))
}

impl Order {
    fn named(name: &str) -> Option<Order> {
        match name {
            "gt" => Some(Order::Gt),
            "gte" => Some(Order::Gte),
            "lt" => Some(Order::Lt),
            "lte" => Some(Order::Lte),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Order::Gt => "gt",
            Order::Gte => "gte",
            Order::Lt => "lt",
            Order::Lte => "lte",
        }
    }
}

/// The filter as JSON, operands as written.
pub(super) fn to_json(n: &Node) -> Value {
    let all = |children: &[Node]| Value::Array(children.iter().map(to_json).collect());
    let mut object = Map::new();
    match n {
        Node::And(children) => {
            object.insert("and".into(), all(children));
        }
        Node::Or(children) => {
            object.insert("or".into(), all(children));
        }
        Node::Not(child) => {
            object.insert("not".into(), to_json(child));
        }
        Node::Condition(c) => {
            let (name, operand) = match &c.op {
                Op::Eq(s) => ("eq", scalar_json(s)),
                Op::Ne(s) => ("ne", scalar_json(s)),
                Op::In(list) => ("in", list.iter().map(scalar_json).collect()),
                Op::NotIn(list) => ("not_in", list.iter().map(scalar_json).collect()),
                Op::Compare(order, bound) => (order.name(), bound.written.clone()),
                Op::Exists(b) => ("exists", Value::Bool(*b)),
                Op::Prefix(p) => ("prefix", Value::String(p.clone())),
            };
            object.insert("field".into(), Value::String(c.path.to_string()));
            object.insert(name.into(), operand);
        }
    }
    Value::Object(object)
}

fn scalar_json(s: &Scalar) -> Value {
    match s {
        Scalar::Null => Value::Null,
        Scalar::Bool(b) => Value::Bool(*b),
        Scalar::Text(t) => Value::String(t.clone()),
        Scalar::Number(b) => b.written.clone(),
    }
}

/// Whether `v` as compact JSON is at most `limit` bytes; stops writing
/// as soon as it is not.
fn fits(v: &Value, limit: usize) -> bool {
    struct Budget(usize);
    impl io::Write for Budget {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 = self
                .0
                .checked_sub(bytes.len())
                .ok_or_else(|| io::Error::other("over the limit"))?;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Budget(limit), v).is_ok()
}
