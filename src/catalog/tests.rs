use serde_json::{Value, json};

use super::{Catalog, Refusal, load_files};

fn file(name: &str, body: Value) -> (String, String) {
    (format!("{name}.json"), body.to_string())
}

fn usage_type(versions: Value) -> (String, String) {
    file(
        "usage.finalized",
        json!({"type": "usage.finalized", "description": "d", "sensitivity": "s", "versions": versions}),
    )
}

fn cost_schema() -> Value {
    json!({"type": "object", "required": ["final_cost"],
           "properties": {"final_cost": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+$"}}})
}

fn load_error(files: &[(String, String)]) -> super::CatalogError {
    load_files(files).expect_err("the catalog should not load")
}

#[test]
fn an_example_that_fails_its_own_schema_names_the_file_and_the_pointer() {
    let e = load_error(&[usage_type(json!([
        {"version": 1, "schema": cost_schema(), "example": {"final_cost": 1.5}}
    ]))]);
    assert_eq!(e.file, "usage.finalized.json");
    assert_eq!(e.pointer, "/versions/0/example/final_cost");
}

#[test]
fn a_schema_that_does_not_compile_is_refused_at_its_pointer() {
    let e = load_error(&[usage_type(json!([
        {"version": 1, "schema": {"type": "no-such-type"}, "example": {}}
    ]))]);
    assert!(e.pointer.starts_with("/versions/0/schema"), "{e}");
}

#[test]
fn a_remote_ref_is_never_fetched_and_the_catalog_does_not_load() {
    let e = load_error(&[usage_type(json!([
        {"version": 1, "schema": {"$ref": "http://127.0.0.1:9/schema.json"}, "example": {}}
    ]))]);
    assert!(e.pointer.starts_with("/versions/0/schema"), "{e}");
}

#[test]
fn compatible_with_must_name_an_earlier_version_the_example_projects_onto() {
    let v1 = json!({"version": 1, "schema": cost_schema(), "example": {"final_cost": "1.0"}});
    let unknown = json!({"version": 2, "schema": cost_schema(), "example": {"final_cost": "1.0"},
                         "compatible_with": [3]});
    assert_eq!(
        load_error(&[usage_type(json!([v1, unknown]))]).pointer,
        "/versions/1/compatible_with/0"
    );
    // v2 renames the field: projected onto v1, the required field is gone.
    let renamed = json!({"version": 2,
        "schema": {"type": "object", "required": ["cost"], "properties": {"cost": {"type": "string"}}},
        "example": {"cost": "1.0"}, "compatible_with": [1]});
    let e = load_error(&[usage_type(json!([v1, renamed]))]);
    assert_eq!(e.pointer, "/versions/1/compatible_with/0");
    assert!(e.problem.contains("projected onto version 1"), "{e}");
}

#[test]
fn versions_ascend_the_file_is_named_after_its_type_and_unknown_keys_are_refused() {
    let v =
        |n: u32| json!({"version": n, "schema": cost_schema(), "example": {"final_cost": "1.0"}});
    assert_eq!(
        load_error(&[usage_type(json!([v(2), v(1)]))]).pointer,
        "/versions/1/version"
    );
    let misnamed = ("usage.json".to_string(), usage_type(json!([v(1)])).1);
    assert_eq!(load_error(&[misnamed]).pointer, "/type");
    let typo = file(
        "usage.finalized",
        json!({"type": "usage.finalized", "description": "d",
        "sensitivity": "s", "versions": [v(1)], "compatible": [1]}),
    );
    assert!(load_error(&[typo]).problem.contains("unknown field"));
}

fn bundled() -> std::sync::Arc<Catalog> {
    Catalog::bundled()
}

#[test]
fn the_bundled_catalog_refuses_what_the_published_schemas_forbid() {
    let c = bundled();
    let refused = |t: &str, data: Value| c.check(t, c.default_version(t), &data).is_err();
    assert!(refused("usage.finalized", json!({})), "empty data");
    assert!(refused(
        "balance.updated",
        json!({"customer_id": "cus_1", "currency": "USD", "balance": 10.5})
    ));
    assert!(refused(
        "balance.updated",
        json!({"customer_id": "cus_1", "currency": "dollars", "balance": "10.50"})
    ));
    assert_eq!(c.check("made.up", 1, &json!({})), Err(Refusal::UnknownType));
}

#[test]
fn invalid_data_lists_each_offending_value_by_pointer() {
    let c = bundled();
    let Err(Refusal::InvalidData(errors)) = c.check(
        "balance.updated",
        1,
        &json!({"customer_id": "cus_1", "currency": "dollars", "balance": 10.5}),
    ) else {
        panic!("should be invalid data");
    };
    let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
    assert!(
        pointers.contains(&"/currency") && pointers.contains(&"/balance"),
        "{errors:?}"
    );
}

#[test]
fn a_lenient_catalog_passes_unknown_types_but_still_checks_known_ones() {
    let lenient = bundled().with_strict(false);
    assert_eq!(lenient.check("made.up", 1, &json!({})), Ok(()));
    assert!(lenient.check("usage.finalized", 1, &json!({})).is_err());
}

#[test]
fn an_unknown_version_is_refused_with_the_latest_named() {
    let c = bundled();
    let latest = c.default_version("usage.finalized");
    assert_eq!(
        c.check("usage.finalized", 99, &json!({})),
        Err(Refusal::UnknownVersion { latest })
    );
}

#[test]
fn every_example_of_the_bundled_catalog_is_valid_at_its_version() {
    let c = bundled();
    for t in c.types() {
        for v in &t.versions {
            assert_eq!(
                c.check(&t.name, v.version, &v.example),
                Ok(()),
                "{} v{}",
                t.name,
                v.version
            );
        }
    }
}

#[test]
fn hookds_own_types_are_always_there_and_cannot_be_redefined() {
    let v = json!({"version": 1, "schema": cost_schema(), "example": {"final_cost": "1.0"}});
    let own = load_files(&[usage_type(json!([v]))]).expect("loads");
    for t in super::OWN_TYPES {
        assert!(own.get(t).is_some(), "{t} is added from the bundle");
    }
    let redefined = file(
        "endpoint.failing",
        json!({"type": "endpoint.failing", "description": "d", "sensitivity": "s",
               "versions": [{"version": 1, "schema": {"type": "object"}, "example": {}}]}),
    );
    let e = load_error(&[redefined]);
    assert_eq!(
        (e.file.as_str(), e.pointer.as_str()),
        ("endpoint.failing.json", "/type")
    );
}
