//! The events the documentation shows, sent through hookd to every example
//! receiver: each event a reader can paste (a `curl -d '…'` body in
//! README.md or docs/) must be applied, and each type's catalog example at
//! every schema version must reach a handler or be acknowledged as a type
//! the receiver does not handle, never end `failed`.

use std::path::Path;

use serde_json::{Value, json};

use super::{ReceiverUnderTest, bed::Bed};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The JSON of every `-d '…'` in `text` that is an event a producer
/// publishes (it has a `type` and a `data`).
fn published_bodies(text: &str) -> Vec<Value> {
    text.split("-d '")
        .skip(1)
        .filter_map(|rest| rest.split('\'').next())
        .filter_map(|body| serde_json::from_str::<Value>(body).ok())
        .filter(|v| v.get("type").is_some() && v.get("data").is_some())
        .collect()
}

/// Every published event in README.md and docs/*.md, each once, with where
/// it is shown.
pub fn documented_events() -> Vec<(String, Value)> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root().join("docs"))
        .expect("the docs folder")
        .map(|e| e.expect("a docs entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out: Vec<(String, Value)> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable doc");
        let name = file.strip_prefix(root()).unwrap_or(&file).display();
        for body in published_bodies(&text) {
            if !out.iter().any(|(_, seen)| *seen == body) {
                out.push((name.to_string(), body));
            }
        }
    }
    out
}

/// Each catalog type's example at each schema version, as a producer would
/// publish it (hookd's own types are hookd's to send, not a producer's).
pub fn catalog_examples() -> Vec<(String, Value)> {
    let mut files: Vec<_> = std::fs::read_dir(root().join("config/catalog"))
        .expect("the bundled catalog")
        .map(|e| e.expect("a catalog entry").path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable catalog file");
        let definition: Value = serde_json::from_str(&text).expect("a catalog file is JSON");
        let event_type = definition["type"].as_str().expect("a catalog type");
        if hookd::catalog::OWN_TYPES.contains(&event_type) {
            continue;
        }
        for version in definition["versions"].as_array().expect("versions") {
            let event = json!({
                "type": event_type,
                "schema_version": version["version"],
                "data": version["example"],
            });
            out.push((format!("{event_type} v{}", version["version"]), event));
        }
    }
    out
}

pub async fn every_documented_event_and_catalog_example_is_applied(spec: &ReceiverUnderTest) {
    let documented = documented_events();
    assert!(
        documented.len() >= 2,
        "the README and the docs show events to publish: {documented:?}"
    );
    let examples = catalog_examples();
    assert!(
        examples.len() >= 9,
        "the catalog has examples: {examples:?}"
    );
    let Some(bed) = Bed::start(spec).await else {
        return;
    };
    for (shown_in, event) in &documented {
        let (_, row) = bed.deliver(event.clone()).await;
        assert_eq!(
            row.status,
            "applied",
            "{}: the event shown in {shown_in} is not applied: {event}\n{}",
            spec.name,
            bed.receiver.stderr()
        );
    }
    for (name, event) in &examples {
        let (_, row) = bed.deliver(event.clone()).await;
        assert!(
            matches!(row.status.as_str(), "applied" | "ignored"),
            "{}: the catalog example {name} ends `{}`: {event}\n{}",
            spec.name,
            row.status,
            bed.receiver.stderr()
        );
    }
}

#[test]
fn the_documentation_shows_events_to_publish_and_the_catalog_has_examples() {
    let documented = documented_events();
    assert!(
        documented
            .iter()
            .any(|(file, e)| file == "README.md" && e["type"] == "usage.finalized"),
        "the README's event is found: {documented:?}"
    );
    assert!(
        catalog_examples()
            .iter()
            .any(|(name, _)| name == "usage.finalized v1"),
        "every version's example is found"
    );
}
