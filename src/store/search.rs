//! The SQL of a search: a base query, filters added as `AND` clauses, and a
//! keyset page over `(time, id)`. The partner's and the operator's lists
//! build theirs here, so a filter means the same wherever it is offered.

use sea_orm::{DbBackend, Statement, Value};

use super::sql;

/// A position in a list ordered by `(created_at, id)`.
pub type Position = (i64, String);

/// Filters of the delivery list.
#[derive(Debug, Default, Clone)]
pub struct DeliveryFilter {
    pub endpoint_id: Option<String>,
    pub event_id: Option<String>,
    pub event_type: Option<String>,
    pub state: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
}

/// A query being built, written with `?` placeholders (numbered for
/// PostgreSQL when it becomes a statement).
pub(crate) struct Search {
    text: String,
    values: Vec<Value>,
}

impl Search {
    /// `base` ends inside a `WHERE` clause (`WHERE 1 = 1` when it has no
    /// condition of its own); its `?` take `values`.
    pub fn new(base: impl Into<String>, values: Vec<Value>) -> Search {
        Search {
            text: base.into(),
            values,
        }
    }

    /// Adds `AND clause`, whose one `?` takes `value`, when there is a value.
    pub fn and_some<V: Into<Value>>(&mut self, clause: &str, value: Option<V>) -> &mut Search {
        if let Some(v) = value {
            self.text.push_str(" AND ");
            self.text.push_str(clause);
            self.values.push(v.into());
        }
        self
    }

    /// Adds `AND clause`, a condition without a value, when `yes`.
    pub fn and_if(&mut self, yes: bool, clause: &str) -> &mut Search {
        if yes {
            self.text.push_str(" AND ");
            self.text.push_str(clause);
        }
        self
    }

    /// The delivery filters of the partner API, over `delivery d` joined to
    /// its event `outbox_event o`.
    pub fn deliveries(&mut self, f: &DeliveryFilter) -> &mut Search {
        self.and_some("d.endpoint_id = ?", f.endpoint_id.clone())
            .and_some("d.event_id = ?", f.event_id.clone())
            .and_some("o.type = ?", f.event_type.clone())
            .and_some("d.state = ?", f.state.clone())
            .and_some("d.created_at >= ?", f.since)
            .and_some("d.created_at < ?", f.until)
    }

    /// Newest first by `(at, id)`, after `before` in that order; at most `limit` rows.
    pub fn newest_first(self, at: &str, id: &str, before: Option<&Position>, limit: u32) -> Search {
        self.page(at, id, before, ("<", "DESC"), limit)
    }

    /// Oldest first by `(at, id)`, after `after`; at most `limit` rows.
    pub fn oldest_first(self, at: &str, id: &str, after: Option<&Position>, limit: u32) -> Search {
        self.page(at, id, after, (">", "ASC"), limit)
    }

    /// Ordered by `order` (an `ORDER BY` list written by the store); at
    /// most `limit` rows.
    pub fn ordered(mut self, order: &str, limit: u32) -> Search {
        self.text.push_str(&format!(" ORDER BY {order} LIMIT ?"));
        self.values.push(i64::from(limit).into());
        self
    }

    fn page(
        mut self,
        at: &str,
        id: &str,
        from: Option<&Position>,
        (past, order): (&str, &str),
        limit: u32,
    ) -> Search {
        if let Some((t, i)) = from {
            self.text.push_str(&format!(
                " AND ({at} {past} ? OR ({at} = ? AND {id} {past} ?))"
            ));
            self.values
                .extend([Value::from(*t), Value::from(*t), Value::from(i.clone())]);
        }
        self.text
            .push_str(&format!(" ORDER BY {at} {order}, {id} {order} LIMIT ?"));
        self.values.push(i64::from(limit).into());
        self
    }

    pub fn statement(self, backend: DbBackend) -> Statement {
        sql(backend, &self.text, self.values)
    }
}
