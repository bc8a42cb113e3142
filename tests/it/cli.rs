//! The binary's command line: operator commands print one JSON object with
//! `--json`, configuration errors name their key, the key file is made once.

use std::process::{Command, Output};

use crate::harness::{self, Backend};
use crate::on_both_backends;

/// `hookd <args>` with only `env` (and PATH) as its environment, run to its end.
pub(crate) fn hookd(env: &[(String, String)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookd"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .expect("the hookd binary runs")
}

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

on_both_backends!(
    operator_commands_create_a_partner_a_key_and_an_endpoint,
    |backend: Backend| async move {
        let (url, _dir) = harness::database(backend).await;
        let env = harness::test_env(&url, &[("HOOKD_LOG__FILTER", "warn")]);
        let partner = json_of(&hookd(
            &env,
            &["partner", "create", "--name", "Acme", "--json"],
        ));
        let partner_id = partner["id"].as_str().expect("an id");
        assert!(partner_id.starts_with("ptn_"));

        for role in [
            vec!["--service"],
            vec!["--operator"],
            vec!["--partner", partner_id],
        ] {
            let mut args = vec!["key", "create", "--json"];
            args.extend(role.iter().copied());
            let key = json_of(&hookd(&env, &args));
            assert!(key["key"].as_str().is_some_and(|k| k.len() > 30), "{key}");
            assert!(
                key["id"].as_str().is_some_and(|k| k.starts_with("key_")),
                "{key}"
            );
        }

        let endpoint = json_of(&hookd(
            &env,
            &[
                "endpoint",
                "create",
                "--partner",
                partner_id,
                "--url",
                "http://127.0.0.1:9/hooks",
                "--event-types",
                "usage.*,balance.updated",
                "--json",
            ],
        ));
        let secret = endpoint["secret"]
            .as_str()
            .expect("the secret is shown once");
        hookd::secret::Secret::parse(secret).expect("a whsec_ secret");

        let refused = hookd(
            &env,
            &[
                "endpoint",
                "create",
                "--partner",
                partner_id,
                "--url",
                "http://10.0.0.1/hooks",
            ],
        );
        assert!(
            !refused.status.success(),
            "a private address is refused at registration"
        );
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("10.0.0.1"),
            "{}",
            String::from_utf8_lossy(&refused.stderr)
        );
        let unknown = hookd(
            &env,
            &[
                "endpoint",
                "create",
                "--partner",
                "ptn_nobody",
                "--url",
                "http://127.0.0.1:9/",
            ],
        );
        assert!(String::from_utf8_lossy(&unknown.stderr).contains("does not exist"));
    }
);

#[test]
fn an_unknown_configuration_key_stops_the_start_and_is_named() {
    let env = vec![("HOOKD_DELIVERY__RETRIES".to_string(), "3".to_string())];
    let out = hookd(&env, &["migrate"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("retries"),
        "the message names the key: {stderr}"
    );
}

#[test]
fn an_invalid_value_stops_the_start_and_names_its_key() {
    let env = vec![("HOOKD_DELIVERY__MAX_AGE".to_string(), "forever".to_string())];
    let out = hookd(&env, &["migrate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("delivery.max_age"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_sqlite_default_generates_a_private_key_file_once() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a temp dir");
    let env = vec![(
        "HOOKD_DATABASE__URL".to_string(),
        format!("sqlite://{}/hookd.db", dir.path().display()),
    )];
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
    let out = hookd(
        &env2,
        &[
            "endpoint",
            "create",
            "--partner",
            &partner,
            "--url",
            "http://127.0.0.1:9/",
            "--json",
        ],
    );
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
    json_of(&hookd(
        &env2,
        &[
            "endpoint",
            "create",
            "--partner",
            &partner,
            "--url",
            "http://127.0.0.1:9/",
            "--json",
        ],
    ));
    assert_eq!(
        std::fs::read_to_string(&key_file).expect("still there"),
        first,
        "the key is made once, then reused"
    );
}

#[test]
fn postgres_without_a_master_key_stops_the_start() {
    let env = vec![(
        "HOOKD_DATABASE__URL".to_string(),
        "postgres://postgres@127.0.0.1:1/none".to_string(),
    )];
    let out = hookd(&env, &["serve"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("secrets.master_key is required with PostgreSQL"),
        "{stderr}"
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
