//! `log.format = "json"`: every line `hookd` writes to stderr is one JSON
//! object with a timestamp, a level, a target and its fields (the message
//! among them), carrying the same fields as the text format.

use serde_json::Value;

use crate::harness::{
    MASTER_KEY, SLOW,
    process::{Hookd, free_port},
    wait_until,
};

#[hookd_test_macros::test]
async fn with_log_format_json_every_line_on_stderr_is_one_json_object() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let port = free_port();
    let database = format!("sqlite://{}/hookd.db", dir.path().display());
    let env = [
        ("HOOKD_LOG__FORMAT", "json".to_string()),
        ("HOOKD_HTTP__LISTEN", format!("127.0.0.1:{port}")),
        ("HOOKD_DATABASE__URL", database.clone()),
        ("HOOKD_SECRETS__MASTER_KEY", MASTER_KEY.to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v));
    let started = chrono::Utc::now();
    let mut hookd = Hookd::start(&["serve"], &env, dir.path(), "hookd");
    let http = awc::Client::default();
    hookd
        .wait_healthy(&http, &format!("http://127.0.0.1:{port}"), SLOW)
        .await;
    let stderr = wait_until(SLOW, || async {
        let stderr = hookd.stderr();
        stderr.contains("hookd is serving").then_some(stderr)
    })
    .await
    .unwrap_or_else(|| panic!("no \"hookd is serving\" line:\n{}", hookd.stderr()));
    hookd.kill();

    let mut serving = None;
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        let object: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a stderr line is not JSON ({e}): {line}"));
        let text = |name: &str| {
            object[name]
                .as_str()
                .unwrap_or_else(|| panic!("the line has no text `{name}`: {line}"))
                .to_string()
        };
        let at = chrono::DateTime::parse_from_rfc3339(&text("timestamp"))
            .unwrap_or_else(|e| panic!("`timestamp` is not RFC 3339 ({e}): {line}"));
        assert!(
            (at.with_timezone(&chrono::Utc) - started)
                .num_seconds()
                .abs()
                < 120,
            "`timestamp` is not the time the line was written: {line}"
        );
        assert!(
            ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&text("level").as_str()),
            "`level` is not a level: {line}"
        );
        assert!(!text("target").is_empty(), "`target` is empty: {line}");
        assert!(
            object["fields"]["message"].is_string(),
            "the line has no `fields.message`: {line}"
        );
        if object["fields"]["message"] == "hookd is serving" {
            serving = Some(object);
        }
    }
    let serving = serving.expect("the start line was checked above");
    assert_eq!(serving["level"], "INFO", "{serving}");
    assert_eq!(
        serving["fields"]["address"],
        format!("127.0.0.1:{port}"),
        "the start line's address field: {serving}"
    );
    assert_eq!(
        serving["fields"]["database"], database,
        "the start line's database field: {serving}"
    );
    assert_eq!(
        serving["fields"]["dev"], false,
        "the start line's dev field: {serving}"
    );
}
