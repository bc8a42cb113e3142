//! What a command prints: one JSON value with `--json` (the API's shapes,
//! so a script can switch between them), otherwise text for a person:
//! aligned tables, `key  value` blocks, and where the next page starts.

use serde::Serialize;

/// Prints `value` as one line of JSON, or `text()` for a person.
pub fn emit<T: Serialize>(
    json: bool,
    value: &T,
    text: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(value)?);
    } else {
        let text = text();
        println!("{}", text.trim_end());
    }
    Ok(())
}

/// Columns aligned under their headers, two spaces apart; the last column
/// is not padded, so a long URL does not push every line wide.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        return "(none)".to_string();
    }
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.trim_end().to_string()
    };
    let mut out = vec![line(headers.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

/// `key  value` lines, keys aligned; absent values are left out.
pub fn fields(pairs: &[(&str, Option<String>)]) -> String {
    let width = pairs
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k.len())
        .max()
        .unwrap_or(0);
    pairs
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k:<width$}  {v}")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The line that says how to get the next page, if there is one.
pub fn more(next_cursor: Option<&str>) -> String {
    next_cursor.map_or(String::new(), |c| format!("\nmore: add --after {c}"))
}

/// An attempt's outcome in a word: its status, else its error category.
pub fn outcome(status: Option<i32>, category: Option<&str>) -> String {
    match (status, category) {
        (Some(s), _) => s.to_string(),
        (None, Some(c)) => c.to_string(),
        (None, None) => "-".to_string(),
    }
}

/// An optional value as a table cell.
pub fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_aligns_its_columns_and_leaves_the_last_unpadded() {
        let t = table(
            &["ID", "STATUS", "URL"],
            &[
                vec!["ep_1".into(), "active".into(), "https://a".into()],
                vec!["ep_22".into(), "disabled".into(), "https://bb".into()],
            ],
        );
        assert_eq!(
            t,
            "ID     STATUS    URL\nep_1   active    https://a\nep_22  disabled  https://bb"
        );
        assert_eq!(table(&["ID"], &[]), "(none)");
    }

    #[test]
    fn fields_leave_out_what_is_absent() {
        let f = fields(&[
            ("id", Some("ep_1".into())),
            ("reason", None),
            ("url", Some("u".into())),
        ]);
        assert_eq!(f, "id   ep_1\nurl  u");
    }
}
