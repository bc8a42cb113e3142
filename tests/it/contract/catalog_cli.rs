//! The catalog is configuration: `hookd catalog check DIR` runs the start's
//! own check, and `serve` with a broken `catalog.path` does not start; both
//! name the file and the JSON pointer. An operator's own catalog adds a type
//! without a rebuild, beside the bundled ones.

use std::process::Output;

use serde_json::{Value, json};

use crate::harness::{Backend, TestApp, spawn_app_with};
use hookd_test_macros::both_backends;

fn hookd(args: &[&str], env: &[(&str, &str)]) -> Output {
    crate::harness::process::command(args, env.iter().copied())
        .output()
        .expect("the hookd binary runs")
}

/// A copy of the bundled catalog in a temporary directory, changed by `edit`.
fn catalog_copy(edit: impl FnOnce(&std::path::Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let bundled = concat!(env!("CARGO_MANIFEST_DIR"), "/config/catalog");
    for entry in std::fs::read_dir(bundled).expect("the bundled catalog") {
        let path = entry.expect("an entry").path();
        std::fs::copy(&path, dir.path().join(path.file_name().expect("a name"))).expect("copied");
    }
    edit(dir.path());
    dir
}

fn write(dir: &std::path::Path, name: &str, value: &Value) {
    std::fs::write(dir.join(name), value.to_string()).expect("written");
}

fn read(dir: &std::path::Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).expect("read")).expect("JSON")
}

/// A copy of the bundled catalog whose `balance.updated` example has a
/// float balance (its schema wants a decimal string).
fn a_catalog_with_a_bad_example() -> tempfile::TempDir {
    catalog_copy(|d| {
        let mut t = read(d, "balance.updated.json");
        t["versions"][0]["example"]["balance"] = json!(10.5);
        write(d, "balance.updated.json", &t);
    })
}

#[test]
fn catalog_check_passes_the_bundled_catalog_and_lists_each_types_versions() {
    let ok = hookd(&["catalog", "check"], &[]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("usage.finalized  versions 1, 2"));
}

#[test]
fn catalog_check_names_the_file_and_pointer_of_an_example_that_fails_its_schema() {
    let dir = a_catalog_with_a_bad_example();
    let path = dir.path().to_str().expect("a UTF-8 path");
    let bad = hookd(&["catalog", "check", path], &[]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("balance.updated.json at /versions/0/example/balance"),
        "{err}"
    );
}

#[test]
fn serve_with_a_broken_catalog_stops_at_start_naming_the_setting_and_the_pointer() {
    let dir = a_catalog_with_a_bad_example();
    let path = dir.path().to_str().expect("a UTF-8 path");
    // The same words as `catalog check`, before touching a database, and
    // before the port: the fault is named even while the port is taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port of the test's own");
    let listen = taken.local_addr().expect("its address").to_string();
    let serve = hookd(
        &["serve"],
        &[
            ("HOOKD_CATALOG__PATH", path),
            ("HOOKD_DATABASE__URL", "sqlite::memory:"),
            ("HOOKD_HTTP__LISTEN", &listen),
        ],
    );
    assert!(!serve.status.success());
    let err = String::from_utf8_lossy(&serve.stderr);
    assert!(
        err.contains("catalog.path") && err.contains("/versions/0/example/balance"),
        "{err}"
    );
}

/// hookd (strict) with the bundled catalog and an operator's own type,
/// `seat.assigned` (a `seat_id` required), added in a copy of it.
async fn with_seat_assigned(backend: Backend) -> (TestApp, tempfile::TempDir) {
    let dir = catalog_copy(|d| {
        write(
            d,
            "seat.assigned.json",
            &json!({
            "type": "seat.assigned", "description": "A seat was assigned.",
            "sensitivity": "Ids only.",
            "versions": [{"version": 1,
                "schema": {"type": "object", "required": ["seat_id"],
                           "properties": {"seat_id": {"type": "string", "minLength": 1}}},
                "example": {"seat_id": "seat_1"}}]}),
        );
    });
    let path = dir.path().to_str().expect("a UTF-8 path").to_string();
    let app = spawn_app_with(
        backend,
        &[
            crate::contract::STRICT,
            ("HOOKD_CATALOG__PATH", path.as_str()),
        ],
    )
    .await;
    (app, dir)
}

/// The catalog's type `name` as `GET /v1/event-types` publishes it.
async fn published(app: &TestApp, name: &str) -> Value {
    let key = app.partner_key().await;
    let (status, types, _) = app.request("GET", "/v1/event-types", &key, None).await;
    assert_eq!(status, 200);
    types["data"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|t| t["type"] == name)
        .unwrap_or_else(|| panic!("{name} is published: {types}"))
        .clone()
}

#[both_backends]
async fn an_operators_catalog_adds_a_type_that_ingest_takes_and_checks_without_a_rebuild(
    backend: Backend,
) {
    let (app, _dir) = with_seat_assigned(backend).await;
    let event =
        |data: Value| json!({"type": "seat.assigned", "partner_id": app.partner_id, "data": data});
    let (status, body) = app.post_events(&event(json!({"seat_id": "seat_9"}))).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = app.post_events(&event(json!({}))).await;
    assert_eq!(status, 422, "{body}");
}

#[both_backends]
async fn an_operators_own_type_is_published_with_its_example(backend: Backend) {
    let (app, _dir) = with_seat_assigned(backend).await;
    let seat = published(&app, "seat.assigned").await;
    assert_eq!(seat["versions"][0]["example"], json!({"seat_id": "seat_1"}));
}

#[both_backends]
async fn the_bundled_types_stay_published_beside_an_operators_own(backend: Backend) {
    let (app, _dir) = with_seat_assigned(backend).await;
    let usage = published(&app, "usage.finalized").await;
    assert_eq!(usage["latest_version"], 2);
    assert_eq!(usage["versions"][1]["compatible_with"], json!([1]));
    assert!(usage["sensitivity"].as_str().is_some_and(|s| !s.is_empty()));
}
