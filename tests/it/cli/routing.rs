//! The routing commands: a filter given to `endpoint create` or `update`
//! (as a flag, from a file, or removed) is checked as the Partner API
//! checks it and audited; `endpoint get` prints it with the ordering;
//! `endpoint held` lists a subject held by its dead head as the operator
//! API does; `delivery skip` lets the subject move on, audited `via: cli`.

use hookd_test_macros::both_backends;
use serde_json::{Value, json};

use super::{assert_exit, cli, cli_env, cli_json, endpoint_create, rows};
use crate::dashboard::audit_entries;
use crate::harness::{TestApp, expect_status};
use crate::ordering::a_subject_held_by_its_dead_head;

/// `hookd endpoint create` for the test partner, for `balance.updated`,
/// with `extra` flags.
fn create_for_balances<'a>(app: &'a TestApp, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = endpoint_create(&app.partner_id, "http://127.0.0.1:9/balances");
    args.extend(["--event-types", "balance.updated"]);
    args.extend(extra);
    args
}

/// The value printed on the line of `name` by `hookd endpoint get` (text).
fn line_of(text: &str, name: &str) -> String {
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix(name)?;
            rest.starts_with("  ").then(|| rest.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no `{name}` line in:\n{text}"))
}

#[both_backends]
async fn endpoint_create_refuses_a_filter_no_subscribed_type_can_pass_naming_the_flag(
    app: TestApp,
) {
    let impossible = r#"{"field": "data.customer", "eq": "cus_1"}"#;
    let before = rows(&app, "endpoint").await;
    let out = cli(
        &cli_env(&app),
        &create_for_balances(&app, &["--filter", impossible]),
    )
    .await;
    assert_exit(&out, 2, "--filter: ");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("data.customer"), "the path is named: {said}");
    assert_eq!(rows(&app, "endpoint").await, before, "no endpoint is made");
}

#[both_backends]
async fn a_filter_given_to_endpoint_create_is_what_the_api_shows_and_endpoint_get_prints_it(
    app: TestApp,
) {
    let env = cli_env(&app);
    let filter = json!({"field": "data.customer_id", "in": ["cus_1", "cus_3"]});
    let text = filter.to_string();
    let ordered = ["--ordering", "subject", "--on-dead", "hold"];
    let args = create_for_balances(&app, &[&["--filter", &text][..], &ordered].concat());
    let made = cli_json(&env, &args).await;
    assert_eq!(made["filter"], filter, "{made}");
    let id = made["id"].as_str().expect("an id").to_string();
    let operator = app.operator_key().await;
    let path = format!("/v1/admin/endpoints/{id}");
    let (status, shown, _) = app.request("GET", &path, &operator, None).await;
    assert_eq!((status, &shown["filter"]), (200, &filter), "{shown}");

    let out = cli(&env, &["endpoint", "get", &id]).await;
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(line_of(&printed, "ordering"), "subject");
    assert_eq!(line_of(&printed, "on dead"), "hold");
    let printed_filter: Value = serde_json::from_str(&line_of(&printed, "filter"))
        .unwrap_or_else(|e| panic!("the filter is printed as JSON ({e}):\n{printed}"));
    assert_eq!(printed_filter, filter);
}

#[both_backends]
async fn endpoint_update_sets_a_filter_from_a_file_and_removes_it_each_audited(app: TestApp) {
    let env = cli_env(&app);
    let made = cli_json(&env, &create_for_balances(&app, &[])).await;
    let id = made["id"].as_str().expect("an id").to_string();
    let filter = json!({"field": "data.balance", "gt": "0"});
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("filter.json");
    std::fs::write(&file, format!("{filter:#}\n")).expect("the filter file is written");
    let file = file.to_string_lossy().to_string();
    let set = cli_json(&env, &["endpoint", "update", &id, "--filter-file", &file]).await;
    assert_eq!(set["filter"], filter, "{set}");

    // customer.created has no balance: the filter could never pass.
    let retyped = [
        "endpoint",
        "update",
        &id,
        "--event-types",
        "customer.created",
    ];
    assert_exit(&cli(&env, &retyped).await, 2, "--filter: ");

    let removed = cli_json(&env, &["endpoint", "update", &id, "--no-filter"]).await;
    assert_eq!(removed["filter"], Value::Null, "{removed}");
    let entries = audit_entries(&app).await;
    let details: Vec<&Value> = entries
        .iter()
        .filter(|e| e.action == "endpoint.update" && e.via == "cli")
        .map(|e| &e.detail)
        .collect();
    assert_eq!(
        details,
        [&json!({"filter": null}), &json!({"filter": filter})],
        "newest first"
    );
}

#[both_backends]
async fn endpoint_held_lists_a_subject_held_by_its_dead_head_as_the_operator_api_does(
    backend: Backend,
) {
    let held = a_subject_held_by_its_dead_head(backend).await;
    let env = cli_env(&held.app);
    let listed = cli_json(&env, &["endpoint", "held", &held.endpoint]).await;
    let operator = held.app.operator_key().await;
    let path = format!("/v1/admin/endpoints/{}/held-subjects", held.endpoint);
    let api = expect_status(&held.app.request("GET", &path, &operator, None).await, 200);
    assert_eq!(listed, api, "the same answer as the operator API's");
    assert_eq!(listed["data"][0]["head"]["delivery_id"], held.head.as_str());

    let out = cli(&env, &["endpoint", "held", &held.endpoint]).await;
    let printed = String::from_utf8_lossy(&out.stdout);
    for shown in [
        "account/s0",
        "dead_head",
        held.head.as_str(),
        "hookd delivery skip",
    ] {
        assert!(printed.contains(shown), "`{shown}` in:\n{printed}");
    }
}

#[both_backends]
async fn delivery_skip_lets_a_held_subject_move_on_and_is_audited_via_the_cli(backend: Backend) {
    let held = a_subject_held_by_its_dead_head(backend).await;
    let env = cli_env(&held.app);
    let skipped = cli_json(&env, &["delivery", "skip", &held.head]).await;
    assert_eq!(
        (&skipped["id"], &skipped["state"]),
        (&json!(held.head), &json!("dead")),
        "a skipped head stays dead: {skipped}"
    );
    let path = format!("/v1/endpoints/{}/held-subjects", held.endpoint);
    let listed = expect_status(&held.app.request("GET", &path, &held.key, None).await, 200);
    let heads: Vec<&Value> = listed["data"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|h| &h["head"]["delivery_id"])
        .collect();
    assert!(
        !heads.contains(&&json!(held.head)),
        "the skipped head holds nothing: {listed}"
    );
    let entries = audit_entries(&held.app).await;
    let entry = entries.first().expect("an audit entry");
    assert_eq!(
        (
            entry.action.as_str(),
            entry.target.as_str(),
            entry.via.as_str()
        ),
        ("delivery.skip", held.head.as_str(), "cli"),
        "{entry:?}"
    );

    let again = cli(&env, &["delivery", "skip", &held.head]).await;
    assert_exit(&again, 1, "holds no subject");
}
