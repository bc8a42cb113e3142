//! Every event example in the documentation (README.md and docs/*.md)
//! passes the bundled catalog: the events posted with `curl -d '…'`, the
//! envelopes in ```json blocks, and the rows inserted with SQL. The pages
//! cannot drift from the contract.

use hookd::{catalog::Catalog, config::Config, http::ingest::parse};
use serde_json::Value;

/// README.md and every page under docs/, each as (path, text).
fn pages() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("README.md")];
    let docs = std::fs::read_dir(root.join("docs")).expect("docs/ is readable");
    paths.extend(
        docs.filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md")),
    );
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            (name, text)
        })
        .collect()
}

/// The fenced blocks of `lang`, each as its text.
fn blocks<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    text.split(open.as_str())
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .collect()
}

/// The JSON bodies of `-d '…'` arguments.
fn curl_bodies(text: &str) -> Vec<&str> {
    text.split("-d '")
        .skip(1)
        .filter_map(|rest| rest.split('\'').next())
        .filter(|body| body.trim_start().starts_with(['{', '[']))
        .collect()
}

/// The values of a SQL `VALUES (…)` tuple: quoted strings unquoted, other
/// literals as written.
fn sql_values(tuple: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = tuple.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if quoted && chars.peek() == Some(&'\'') => {
                current.push('\'');
                chars.next();
            }
            '\'' => quoted = !quoted,
            ',' if !quoted => values.push(std::mem::take(&mut current).trim().to_string()),
            c => current.push(c),
        }
    }
    values.push(current.trim().to_string());
    values
}

/// (type, schema_version, payload) of each `INSERT INTO outbox_event`.
fn sql_events(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for block in blocks(text, "sql") {
        for insert in block.split("INSERT INTO outbox_event").skip(1) {
            let (Some(cols), Some(vals)) = (
                insert
                    .split_once('(')
                    .and_then(|(_, r)| r.split_once(')'))
                    .map(|(c, _)| c),
                insert.split_once("VALUES").map(|(_, v)| v),
            ) else {
                panic!("an INSERT INTO outbox_event the test cannot read: {insert}");
            };
            let vals = vals.trim().trim_start_matches('(');
            let vals = &vals[..vals.rfind(')').expect("a closing parenthesis")];
            let names: Vec<&str> = cols.split(',').map(str::trim).collect();
            let values = sql_values(vals);
            assert_eq!(names.len(), values.len(), "columns and values of {insert}");
            let get =
                |name: &str| values[names.iter().position(|n| *n == name).expect(name)].clone();
            out.push((get("type"), get("schema_version"), get("payload")));
        }
    }
    out
}

#[test]
fn every_event_example_in_the_docs_passes_the_catalog() {
    let catalog = Catalog::bundled();
    let mut checked = 0;
    for (page, text) in pages() {
        checked += check_examples(&page, &text, &catalog);
    }
    assert!(checked >= 5, "the docs' examples were found ({checked})");
}

/// Checks every event example on one page; returns how many it checked.
fn check_examples(page: &str, text: &str, catalog: &Catalog) -> usize {
    let limits = Config::defaults().ingest;
    let mut checked = 0;
    for body in curl_bodies(text) {
        let value: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        if value.get("data").is_none() && !value.is_array() {
            continue;
        }
        if let Err(p) = parse(body.as_bytes(), 0, &limits, catalog) {
            panic!("{page}: `{body}` is refused: {}", p.detail);
        }
        checked += 1;
    }
    for block in blocks(text, "json") {
        let v: Value = serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: {block}"));
        let (Some(t), Some(version), Some(data)) = (
            v["type"].as_str(),
            v["schema_version"].as_u64(),
            v.get("data"),
        ) else {
            panic!(
                "{page}: a json block that is not an envelope with an integer schema_version: {block}"
            );
        };
        if let Err(e) = catalog.check(t, version as u32, data) {
            panic!("{page}: the envelope's data fails {t} v{version}: {e:?}");
        }
        checked += 1;
    }
    for (t, version, payload) in sql_events(text) {
        let data: Value =
            serde_json::from_str(&payload).unwrap_or_else(|e| panic!("{e}: {payload}"));
        let version: u32 = version
            .parse()
            .unwrap_or_else(|_| panic!("schema_version `{version}`"));
        if let Err(e) = catalog.check(&t, version, &data) {
            panic!("{page}: the SQL example's payload fails {t} v{version}: {e:?}");
        }
        checked += 1;
    }
    checked
}

#[test]
fn the_reader_finds_sql_values_with_quotes_and_commas_inside() {
    assert_eq!(
        sql_values("'a', 7, '{\"x\":\"1,2\"}', 'it''s', NULL"),
        ["a", "7", "{\"x\":\"1,2\"}", "it's", "NULL"]
    );
}
