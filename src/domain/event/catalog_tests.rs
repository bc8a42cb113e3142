//! Events checked against the bundled catalog.
use super::*;
use serde_json::json;

fn validate(v: Value) -> Result<NewEvent, FieldError> {
    let input: EventInput = serde_json::from_str(&v.to_string()).expect("deserializes");
    input.validate(0, 4096, &Catalog::bundled())
}

fn usage(data: Value) -> Value {
    json!({"type": "usage.finalized", "partner_id": "p", "schema_version": 1, "data": data})
}

#[test]
fn schema_version_is_a_positive_integer_or_its_digits_and_defaults_to_the_latest() {
    let data = json!({"customer_id": "cus_1", "currency": "USD", "final_cost": "1.00"});
    assert_eq!(
        validate(usage(data.clone())).expect("valid").schema_version,
        1
    );
    let mut as_text = usage(data.clone());
    as_text["schema_version"] = json!("1");
    assert_eq!(validate(as_text).expect("valid").schema_version, 1);
    for bad in [json!(0), json!(-1), json!(1.5), json!("v1"), json!(true)] {
        let mut v = usage(data.clone());
        v["schema_version"] = bad.clone();
        assert_eq!(
            validate(v).expect_err("refused").field,
            "schema_version",
            "{bad}"
        );
    }
    let latest = Catalog::bundled().default_version("customer.created");
    let e = validate(json!({"type": "customer.created", "partner_id": "p",
                            "data": {"customer_id": "cus_1"}}))
    .expect("valid");
    assert_eq!(e.schema_version, latest);
}

#[test]
fn data_that_fails_its_schema_is_refused_with_pointers_and_an_unknown_type_by_name() {
    let e = validate(usage(
        json!({"customer_id": "cus_1", "currency": "dollars", "final_cost": 1.5}),
    ))
    .expect_err("invalid");
    let FieldErrorKind::InvalidData(errors) = &e.kind else {
        panic!("{e:?}")
    };
    let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
    assert!(
        pointers.contains(&"/currency") && pointers.contains(&"/final_cost"),
        "{pointers:?}"
    );
    let e =
        validate(json!({"type": "made.up", "partner_id": "p", "data": {}})).expect_err("unknown");
    assert_eq!(
        (e.field.as_str(), e.kind),
        ("type", FieldErrorKind::UnknownType)
    );
}

#[test]
fn the_envelope_carries_the_version_as_an_integer() {
    let e = validate(usage(
        json!({"customer_id": "cus_1", "currency": "USD", "final_cost": "1.00"}),
    ))
    .expect("valid");
    let body: Value = serde_json::from_slice(&envelope(&e)).expect("JSON");
    assert_eq!(body["schema_version"], json!(1));
}
