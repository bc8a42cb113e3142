//! The binary's command line: what the operator commands make is what the
//! API then sees (`made`: each key with its role, each endpoint with its
//! secret), a refused command exits with its status and changes nothing
//! (`refused`), filters checked as the API checks them and held subjects
//! listed and skipped (`routing`), configuration errors name their key, the
//! key file is made once; no command but `serve`, `migrate` and `demo`
//! creates a database (`no_database`).

mod made;
mod no_database;
mod refused;
mod routing;

use std::process::Output;

use serde_json::{Value, json};

use crate::harness::{self, TestApp};

pub(crate) use harness::process::run as hookd;

/// The one JSON value a successful command printed.
pub(crate) fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "hookd failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The CLI's environment on the database of `app` (hookd running in process).
fn cli_env(app: &TestApp) -> Vec<(String, String)> {
    let url = &app.running.shared.config.database.url;
    harness::test_env(url, &[("HOOKD_LOG__FILTER", "warn")])
}

/// Asserts `hookd <args>` with `env` stopped with exit status 2 (a
/// configuration error) and a message naming `named`.
fn assert_config_error(env: &[(String, String)], args: &[&str], named: &str) {
    let out = hookd(env, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a configuration error: {stderr}"
    );
    assert!(
        stderr.contains(named),
        "the message names {named}: {stderr}"
    );
}

/// `hookd <args>` with `env`, off the test's runtime (hookd keeps answering).
async fn cli(env: &[(String, String)], args: &[&str]) -> Output {
    let args = args.iter().map(|a| a.to_string()).collect();
    harness::process::run_off_runtime(env.to_vec(), args).await
}

/// `hookd <args> --json`, which must succeed: the one JSON value it printed.
async fn cli_json(env: &[(String, String)], args: &[&str]) -> Value {
    let args = [args, &["--json"]].concat();
    json_of(&cli(env, &args).await)
}

/// `hookd key create <role…> --json`: the key it printed, checked for shape.
async fn key_made(env: &[(String, String)], role: &[&str]) -> String {
    let made = cli_json(env, &[&["key", "create"], role].concat()).await;
    assert!(
        made["id"].as_str().is_some_and(|k| k.starts_with("key_")),
        "{made}"
    );
    made["key"]
        .as_str()
        .expect("the key is shown once")
        .to_string()
}

/// Asserts the command failed with exit status `code` (docs/operating.md: 1 failed, 2
/// bad input, 3 not found), printed nothing and said why naming `named`.
fn assert_exit(out: &Output, code: i32, named: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "the exit status; stderr: {stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "a failed command prints nothing: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains(named), "the error names {named}: {stderr}");
}

/// The rows of `table`.
async fn rows(app: &TestApp, table: &str) -> i64 {
    app.count(&format!("SELECT COUNT(*) AS n FROM {table}"))
        .await
}

/// The status of `method path` with `key`, and its body for messages.
async fn status_of(
    app: &TestApp,
    method: &str,
    path: &str,
    key: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let (status, body, _) = app.request(method, path, key, body).await;
    (status, body)
}

/// The arguments of `hookd endpoint create` for `partner` at `url`.
fn endpoint_create<'a>(partner: &'a str, url: &'a str) -> Vec<&'a str> {
    vec!["endpoint", "create", "--partner", partner, "--url", url]
}

/// The partner `id` as the operator API shows it: (status, body).
async fn stored_partner(app: &TestApp, id: &str) -> (u16, Value) {
    let operator = app.operator_key().await;
    let path = format!("/v1/admin/partners/{id}");
    status_of(app, "GET", &path, &operator, None).await
}

/// One event for `partner`, as a producer posts it.
fn an_event_for(partner: &str) -> Value {
    json!({"type": "a.b", "partner_id": partner, "data": {"n": 1}})
}

#[test]
fn an_unknown_configuration_key_stops_the_start_and_is_named() {
    let env = vec![("HOOKD_DELIVERY__RETRIES".to_string(), "3".to_string())];
    assert_config_error(&env, &["migrate"], "retries");
}

#[test]
fn an_invalid_value_stops_the_start_and_names_its_key() {
    let env = vec![("HOOKD_DELIVERY__MAX_AGE".to_string(), "forever".to_string())];
    assert_config_error(&env, &["migrate"], "delivery.max_age");
}

#[test]
fn the_sqlite_default_generates_a_private_key_file_once() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temp dir");
    let env = vec![(
        "HOOKD_DATABASE__URL".to_string(),
        format!("sqlite://{}/hookd.db", dir.path().display()),
    )];
    let migrated = hookd(&env, &["migrate"]);
    assert!(migrated.status.success(), "{migrated:?}");
    let out = hookd(&env, &["partner", "create", "--name", "A", "--json"]);
    let partner = json_of(&out)["id"].as_str().expect("an id").to_string();
    // The key file appears when a secret is first needed.
    let env2 = [
        env.clone(),
        vec![
            ("HOOKD_EGRESS__ALLOW_HTTP".into(), "true".into()),
            (
                "HOOKD_EGRESS__ALLOW_CIDRS".into(),
                r#"["127.0.0.0/8"]"#.into(),
            ),
            ("HOOKD_EGRESS__ALLOWED_PORTS".into(), "[]".into()),
        ],
    ]
    .concat();
    let make_an_endpoint = || {
        let args = [
            endpoint_create(&partner, "http://127.0.0.1:9/"),
            vec!["--json"],
        ]
        .concat();
        hookd(&env2, &args)
    };
    let out = make_an_endpoint();
    json_of(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("generated a new secrets key file"),
        "the log says so"
    );
    let key_file = dir.path().join("hookd.db.key");
    let first = std::fs::read_to_string(&key_file).expect("the key file exists");
    assert_eq!(
        std::fs::metadata(&key_file)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    json_of(&make_an_endpoint());
    assert_eq!(
        std::fs::read_to_string(&key_file).expect("still there"),
        first,
        "the key is made once, then reused"
    );
}

#[test]
fn postgres_without_a_master_key_stops_the_start() {
    // Named before the port is bound: also while the port is taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port of the test's own");
    let env = vec![
        (
            "HOOKD_DATABASE__URL".to_string(),
            "postgres://postgres@127.0.0.1:1/none".to_string(),
        ),
        (
            "HOOKD_HTTP__LISTEN".to_string(),
            taken.local_addr().expect("its address").to_string(),
        ),
    ];
    assert_config_error(
        &env,
        &["serve"],
        "secrets.master_key is required with PostgreSQL",
    );
}

#[test]
fn the_demo_delivers_every_sample_event_with_a_verified_signature_and_shows_a_retry() {
    let env = [
        ("HOOKD_HTTP__LISTEN".to_string(), "127.0.0.1:0".to_string()),
        ("HOOKD_LOG__FILTER".to_string(), "warn".to_string()),
    ];
    let out = hookd(&env, &["demo", "--events", "3", "--exit-when-delivered"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches("signature verified, accepted").count(),
        3,
        "each event is accepted once: {stdout}"
    );
    assert!(
        stdout.contains("answering 503 once") && stdout.contains("accepted on attempt 2"),
        "the refused event is retried: {stdout}"
    );
    assert!(
        stdout.contains("all 3 events delivered and verified"),
        "{stdout}"
    );
}
