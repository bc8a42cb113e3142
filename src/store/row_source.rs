//! A batch of rows given to a statement as a table (its columns named
//! `column1`, `column2`…, as `VALUES` names them on both backends), and a
//! list of ids given to `IN`.
//!
//! On SQLite the batch goes as one JSON parameter read by `jsonb_each`, so a
//! statement has one text whatever the size of its batch. SQLite compiles
//! each text into a program kept per connection (tens of KiB for a batch of
//! many rows); a text per batch size filled each connection's cache with
//! programs used once, pushed out the ones in use, and had them compiled
//! again. On PostgreSQL the rows stay `VALUES` tuples and the ids
//! placeholders, whose parameters carry their types to the server.

use sea_orm::{DbBackend, Value};

/// Rows of `columns` values each, in order, for one statement.
pub(crate) struct RowSource {
    backend: DbBackend,
    columns: usize,
    values: Vec<Value>,
}

impl RowSource {
    pub(crate) fn new(backend: DbBackend, columns: usize) -> RowSource {
        RowSource {
            backend,
            columns,
            values: Vec::new(),
        }
    }

    /// Adds one row: exactly `columns` values.
    pub(crate) fn push(&mut self, row: impl IntoIterator<Item = Value>) {
        let before = self.values.len();
        self.values.extend(row);
        debug_assert_eq!(self.values.len() - before, self.columns, "one row");
    }

    /// As a table to select from: `(VALUES (?, …), …)` or SQLite's
    /// `(SELECT j.value ->> 0 AS column1, … FROM jsonb_each(?) AS j)`; with
    /// its parameters.
    pub(crate) fn table(self) -> (String, Vec<Value>) {
        if self.backend == DbBackend::Sqlite {
            let (select, values) = self.json_select();
            return (format!("({select})"), values);
        }
        let (values, params) = self.tuples();
        (format!("(VALUES {values})"), params)
    }

    /// As the rows of an `INSERT`: `VALUES (?, …), …` or SQLite's
    /// `SELECT … FROM jsonb_each(?) AS j WHERE true` (the `WHERE` lets an
    /// `ON CONFLICT` follow).
    pub(crate) fn insert_rows(self) -> (String, Vec<Value>) {
        if self.backend == DbBackend::Sqlite {
            let (select, values) = self.json_select();
            return (format!("{select} WHERE true"), values);
        }
        let (values, params) = self.tuples();
        (format!("VALUES {values}"), params)
    }

    fn tuples(self) -> (String, Vec<Value>) {
        let rows = self.values.len() / self.columns.max(1);
        let tuple = format!("({})", vec!["?"; self.columns].join(", "));
        (vec![tuple; rows].join(", "), self.values)
    }

    fn json_select(self) -> (String, Vec<Value>) {
        let columns: Vec<String> = (0..self.columns)
            .map(|i| format!("j.value ->> {i} AS column{}", i + 1))
            .collect();
        let rows: Vec<serde_json::Value> = self
            .values
            .chunks(self.columns.max(1))
            .map(|row| serde_json::Value::Array(row.iter().map(json).collect()))
            .collect();
        // `jsonb_each`: each row's array as SQLite's parsed form, which
        // `->>` reads without parsing its text again for every column.
        let text = format!("SELECT {} FROM jsonb_each(?) AS j", columns.join(", "));
        (
            text,
            vec![serde_json::Value::Array(rows).to_string().into()],
        )
    }
}

/// ` AND <column> NOT IN (…)` leaving out `ids` (nothing for none on
/// PostgreSQL), with its parameters.
pub(crate) fn not_in(backend: DbBackend, column: &str, ids: &[String]) -> (String, Vec<Value>) {
    if backend == DbBackend::Sqlite {
        let list = serde_json::to_string(ids).expect("strings serialise");
        let text = format!(" AND {column} NOT IN (SELECT value FROM json_each(?))");
        return (text, vec![list.into()]);
    }
    if ids.is_empty() {
        return (String::new(), Vec::new());
    }
    let text = format!(" AND {column} NOT IN ({})", super::placeholders(ids.len()));
    (
        text,
        ids.iter().map(|id| Value::from(id.as_str())).collect(),
    )
}

fn json(value: &Value) -> serde_json::Value {
    sea_orm::sea_query::value::sea_value_to_json_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_rows(backend: DbBackend) -> RowSource {
        let mut rows = RowSource::new(backend, 3);
        rows.push([
            Value::from("a"),
            Value::from(1i64),
            Value::from(None::<String>),
        ]);
        rows.push([Value::from("b"), Value::from(2i64), Value::from(Some("x"))]);
        rows
    }

    #[test]
    fn on_sqlite_any_number_of_rows_is_one_text_and_one_parameter() {
        let (one, _) = {
            let mut rows = RowSource::new(DbBackend::Sqlite, 3);
            rows.push([Value::from("a"), Value::from(1i64), Value::from(true)]);
            rows.table()
        };
        let (two, params) = two_rows(DbBackend::Sqlite).table();
        assert_eq!(one, two);
        assert_eq!(
            two,
            "(SELECT j.value ->> 0 AS column1, j.value ->> 1 AS column2, j.value ->> 2 AS column3 \
             FROM jsonb_each(?) AS j)"
        );
        assert_eq!(params, [Value::from(r#"[["a",1,null],["b",2,"x"]]"#)]);
    }

    #[test]
    fn on_postgres_rows_are_values_tuples() {
        let (table, params) = two_rows(DbBackend::Postgres).table();
        assert_eq!(table, "(VALUES (?, ?, ?), (?, ?, ?))");
        assert_eq!(params.len(), 6);
        let (insert, _) = two_rows(DbBackend::Postgres).insert_rows();
        assert_eq!(insert, "VALUES (?, ?, ?), (?, ?, ?)");
    }

    #[test]
    fn an_insert_on_sqlite_can_take_on_conflict() {
        let (insert, _) = two_rows(DbBackend::Sqlite).insert_rows();
        assert!(insert.starts_with("SELECT "), "{insert}");
        assert!(
            insert.ends_with(" FROM jsonb_each(?) AS j WHERE true"),
            "{insert}"
        );
    }

    #[test]
    fn not_in_is_one_text_on_sqlite_and_nothing_for_no_ids_on_postgres() {
        let ids = ["d1".to_string(), "d2".to_string()];
        let (none, no_params) = not_in(DbBackend::Sqlite, "id", &[]);
        let (two, params) = not_in(DbBackend::Sqlite, "id", &ids);
        assert_eq!(none, two);
        assert_eq!(no_params, [Value::from("[]")]);
        assert_eq!(params, [Value::from(r#"["d1","d2"]"#)]);
        assert_eq!(not_in(DbBackend::Postgres, "id", &[]).0, "");
        assert_eq!(
            not_in(DbBackend::Postgres, "id", &ids).0,
            " AND id NOT IN (?, ?)"
        );
    }
}
