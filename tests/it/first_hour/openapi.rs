//! The OpenAPI document a running hookd serves is valid: the real
//! `openapi-spec-validator` (PyPI, pinned by hash in
//! `openapi-requirements.txt`, installed once into a cached venv by
//! `harness::python`) accepts it, every response is described, and its one
//! server is `/`. Without Python the test skips loudly; under `CI=true` it
//! fails instead.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::Value;

use crate::harness::{Backend, python, quiesce, spawn_app};

fn requirements() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/first_hour/openapi-requirements.txt")
}

/// Runs the validator on `doc`: `Ok` with its output when it accepts it.
fn validate(python: &Path, doc: &Value, dir: &Path, name: &str) -> Result<String, String> {
    let file = dir.join(name);
    std::fs::write(&file, serde_json::to_vec_pretty(doc).expect("JSON")).expect("the document");
    let out = Command::new(python)
        .args(["-m", "openapi_spec_validator", "--validation-errors", "all"])
        .arg(&file)
        .output()
        .expect("the validator runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

/// Every response of every operation, as `METHOD path status`, with the
/// response object.
fn responses(doc: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            for (status, response) in op["responses"].as_object().into_iter().flatten() {
                out.push((format!("{method} {path} {status}"), response));
            }
        }
    }
    out
}

/// The document a running hookd serves, without a key.
async fn served_document() -> Value {
    let app = spawn_app(Backend::Sqlite).await;
    let (status, doc, _) = app.request("GET", "/v1/openapi.json", "", None).await;
    assert_eq!(status, 200, "the document is served without a key: {doc}");
    quiesce().await;
    doc
}

#[hookd_test_macros::test]
async fn every_response_in_the_served_openapi_document_is_described() {
    let doc = served_document().await;
    let bare: Vec<String> = responses(&doc)
        .into_iter()
        .filter(|(_, r)| {
            r["description"]
                .as_str()
                .is_none_or(|d| d.trim().is_empty())
        })
        .map(|(at, _)| at)
        .collect();
    assert!(
        bare.is_empty(),
        "these responses have no description: {bare:#?}"
    );
}

#[hookd_test_macros::test]
async fn the_served_openapi_documents_one_server_is_relative() {
    let doc = served_document().await;
    assert_eq!(
        doc["servers"][0]["url"], "/",
        "one server, relative to wherever the document was fetched: {}",
        doc["servers"]
    );
}

#[hookd_test_macros::test]
async fn the_served_openapi_document_passes_openapi_spec_validator() {
    let Some(python) = python::venv_or_skip(
        "the OpenAPI validator",
        "openapi-spec-validator",
        &requirements(),
    ) else {
        return;
    };
    let doc = served_document().await;
    let dir = tempfile::tempdir().expect("a temp dir");
    if let Err(report) = validate(&python, &doc, dir.path(), "openapi.json") {
        panic!("openapi-spec-validator refuses the served document:\n{report}");
    }

    // The validator is not a rubber stamp: a response without its
    // description is refused, and named.
    let mut broken = doc.clone();
    let (first, _) = responses(&doc).remove(0);
    let mut parts = first.splitn(3, ' ');
    let (method, path, status) = (parts.next(), parts.next(), parts.next());
    broken["paths"][path.unwrap_or_default()][method.unwrap_or_default()]["responses"]
        [status.unwrap_or_default()]
    .as_object_mut()
    .expect("a response object")
    .remove("description");
    let report = validate(&python, &broken, dir.path(), "broken.json")
        .expect_err("a response without a description is refused");
    assert!(
        report.contains("'description' is a required property"),
        "the validator says what is missing: {report}"
    );
}
