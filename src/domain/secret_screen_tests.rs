//! The secret screen's rules, one by one, and the edges of its thresholds.

use serde_json::{Value, json};

use super::{
    Allowed, ENTROPY_RULE, Finding, MIN_BITS_PER_CHAR, MIN_SECRET_CHARS, Rule, SecretScreen,
    bits_per_char, secret_like_name,
};

fn findings(data: Value) -> Vec<Finding> {
    SecretScreen::bundled().screen("balance.updated", &data)
}

fn rules(data: Value) -> Vec<String> {
    findings(data).into_iter().map(|f| f.rule).collect()
}

// Assembled from parts, so no whole key sits in the source for scanners.
fn key(prefix: &str, body: &str) -> String {
    format!("{prefix}{body}")
}

#[test]
fn each_bundled_pattern_finds_its_shape_under_any_name() {
    let cases = [
        (
            key("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"),
            "payment-provider-key",
        ),
        (
            key("sk_test_", "51H8xYzAbCdEfGhIjKlMnOp"),
            "payment-provider-key",
        ),
        (
            key("rk_live_", "9aB8cD7eF6gH5iJ4kL3mN2o"),
            "payment-provider-key",
        ),
        (
            key("sk-proj-", "Ab3dEf6hIj9kLm2nOp5qRs8t"),
            "ai-provider-key",
        ),
        (
            key("sk-ant-api03-", "Zx8Yw7Vu6Ts5Rq4Po3"),
            "ai-provider-key",
        ),
        (key("AKIA", "IOSFODNN7EXAMPLE"), "aws-access-key-id"),
        (
            key("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
            "github-token",
        ),
        (
            key("github_pat_", "11ABCDEFG0123456789_abcdefghijk"),
            "github-token",
        ),
        (key("xoxb-", "123456789012-abcdefABCDEF"), "slack-token"),
        (key("xoxp-", "123456789012-abcdefABCDEF"), "slack-token"),
        (
            key(
                "eyJhbGciOiJIUzI1NiJ9.",
                "eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r",
            ),
            "json-web-token",
        ),
        (
            key("-----BEGIN RSA ", "PRIVATE KEY-----\nMIIEowIBAAKCAQEA"),
            "private-key",
        ),
        (
            key("-----BEGIN ", "PRIVATE KEY-----\nMIIEvQIBADANBgkq"),
            "private-key",
        ),
        (key("Bearer ", "mF_9.B5f-4.1JqM9aZx"), "bearer-token"),
    ];
    for (value, rule) in cases {
        assert_eq!(
            rules(json!({"note": value})),
            [rule],
            "`{value}` is found by {rule}"
        );
    }
}

#[test]
fn masked_prefixes_and_ordinary_values_pass() {
    let data = json!({
        "customer_id": "cus_204",
        "api_key_id": "key_7781",
        "key_prefix": "sk_live_ab12",
        "display_prefix": "sk-3f9a",
        "api_key": "sk_live_ab12",
        "status": "active",
        "reason": "Bearer tokens are rotated monthly",
        "message": "use the sk- prefix for test keys",
        "currency": "USD",
        "balance": "98.725200"
    });
    assert_eq!(findings(data), []);
}

#[test]
fn the_entropy_rule_holds_a_secret_like_name_to_its_length_threshold() {
    let long = "x9Qm2LpT7vR4nZ8kW3jH";
    assert_eq!(long.chars().count(), MIN_SECRET_CHARS);
    assert_eq!(rules(json!({"api_key": long})), [ENTROPY_RULE]);
    let short = &long[..MIN_SECRET_CHARS - 1];
    assert_eq!(rules(json!({"api_key": short})), Vec::<String>::new());
}

#[test]
fn the_entropy_rule_holds_a_secret_like_name_to_its_entropy_threshold() {
    // Twelve symbols, each twice: log2(12) = 3.58 bits per character.
    let above = "a1b2c3d4e5f6a1b2c3d4e5f6";
    // Eleven symbols, each twice: log2(11) = 3.46.
    let below = "a1b2c3d4e5fa1b2c3d4e5f";
    assert!(bits_per_char(above) >= MIN_BITS_PER_CHAR);
    assert!(bits_per_char(below) < MIN_BITS_PER_CHAR);
    assert_eq!(rules(json!({"client_secret": above})), [ENTROPY_RULE]);
    assert_eq!(rules(json!({"client_secret": below})), Vec::<String>::new());
}

#[test]
fn the_entropy_rule_ignores_names_that_are_not_secret_like_and_text_with_spaces() {
    let random = "x9Qm2LpT7vR4nZ8kW3jH";
    assert_eq!(rules(json!({"usage_id": random})), Vec::<String>::new());
    let sentence = "rotated 2026-12-01 by the on-call engineer";
    assert_eq!(
        rules(json!({"password_hint": sentence})),
        Vec::<String>::new()
    );
}

#[test]
fn secret_like_names_are_told_apart_from_ids_and_prefixes() {
    for name in [
        "api_key",
        "apiKey",
        "secret",
        "client_secret",
        "access_token",
        "refreshToken",
        "password",
        "db_password_old",
        "credentials",
        "credential_blob",
        "Authorization",
        "private-key",
    ] {
        assert!(secret_like_name(name), "{name} is secret-like");
    }
    for name in [
        "api_key_id",
        "key_prefix",
        "display_prefix",
        "customer_id",
        "tokens_used",
    ] {
        assert!(!secret_like_name(name), "{name} is not secret-like");
    }
}

#[test]
fn findings_point_into_nested_objects_and_arrays() {
    let secret = key("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc");
    let data = json!({
        "customer": {"billing": {"note": secret}},
        "lines": [{"id": "l1"}, {"id": "l2", "tokens": ["ok", "x9Qm2LpT7vR4nZ8kW3jH"]}],
        "a/b": {"c~d": secret}
    });
    let mut found = findings(data);
    found.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    assert_eq!(
        found,
        [
            Finding {
                pointer: "/a~1b/c~0d".into(),
                rule: "payment-provider-key".into()
            },
            Finding {
                pointer: "/customer/billing/note".into(),
                rule: "payment-provider-key".into()
            },
            Finding {
                pointer: "/lines/1/tokens/1".into(),
                rule: ENTROPY_RULE.into()
            },
        ]
    );
}

#[test]
fn an_allowed_field_passes_for_its_type_only() {
    let secret = key("sk_test_", "51H8xYzAbCdEfGhIjKlMnOp");
    let allowed = vec![
        Allowed::parse("balance.updated:/data/fixture_key").expect("parses"),
        Allowed::parse("*:/data/lines/*/token").expect("parses"),
    ];
    let screen = SecretScreen::new(Vec::new(), allowed);
    let data = json!({"fixture_key": secret, "lines": [{"token": secret}, {"token": secret}]});
    assert_eq!(screen.screen("balance.updated", &data), []);
    let elsewhere = screen.screen("customer.created", &data);
    assert_eq!(
        elsewhere
            .iter()
            .map(|f| f.pointer.as_str())
            .collect::<Vec<_>>(),
        ["/fixture_key"],
        "the allowance names balance.updated only"
    );
}

#[test]
fn an_allowance_must_name_a_type_and_a_pointer_into_data() {
    for bad in [
        "balance.updated",
        "balance.updated:/subject/id",
        "balance.updated:/data/",
        "Balance:/data/x",
    ] {
        assert!(Allowed::parse(bad).is_err(), "{bad} is refused");
    }
}

#[test]
fn an_operator_pattern_is_a_rule_of_its_own() {
    let rule = Rule::new("internal-key", r"\bik_[a-z0-9]{12}\b").expect("compiles");
    let screen = SecretScreen::new(vec![rule], Vec::new());
    let data = json!({"note": "ik_0a1b2c3d4e5f"});
    assert_eq!(
        screen.screen("a.b", &data),
        [Finding {
            pointer: "/note".into(),
            rule: "internal-key".into()
        }]
    );
    assert_eq!(SecretScreen::bundled().screen("a.b", &data), []);
}

#[test]
fn a_screen_that_is_off_finds_nothing() {
    let data = json!({"api_key": key("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc")});
    assert_eq!(SecretScreen::off().screen("a.b", &data), []);
}
