//! The shipped alert rules (config/alerts.yml) fire on what a real hookd
//! exports: a delivery that died, an endpoint failing for two hours (the
//! alert names it), an endpoint hookd disabled on a 410. The scrape's
//! non-zero series, held over time, are the input of a `promtool test rules`.

use std::{fmt::Write as _, path::Path, time::Duration};

use serde_json::json;

use crate::harness::{
    WAIT,
    receiver::{Receiver, Reply},
    skip::skipping,
    spawn_app_with,
};
use hookd_test_macros::both_backends;

/// The value of the one sample of `name` whose line contains `with`.
fn sample(scrape: &str, name: &str, with: &str) -> f64 {
    scrape
        .lines()
        .filter(|l| l.starts_with(name) && l.contains(with))
        .find_map(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("the scrape has no `{name}` with `{with}`:\n{scrape}"))
}

/// Prometheus' `humanizeDuration` of whole seconds.
fn humanized(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m {s}s"),
        _ => format!("{d}d {h}h {m}m {s}s"),
    }
}

#[both_backends]
async fn the_shipped_alerts_fire_on_a_live_scrape_and_the_failing_one_names_its_endpoint(
    backend: Backend,
) {
    if std::process::Command::new("promtool")
        .arg("--version")
        .output()
        .is_err()
        && skipping(
            "the alert rules on a live scrape",
            "promtool is not installed",
        )
    {
        return;
    }
    // One attempt each: a failure is dead at once.
    let env = [
        ("HOOKD_DELIVERY__SCHEDULE", r#"["0s"]"#),
        ("HOOKD_DELIVERY__JITTER", "0"),
    ];
    let app = spawn_app_with(backend, &env).await;
    let operator = app.operator_key().await;
    let (failing, gone) = (Receiver::start().await, Receiver::start().await);
    failing.set_default(Reply::status(500));
    gone.set_default(Reply::status(410));
    let (broken, _) = app
        .endpoint_for(&app.partner_id, &failing.url(), &["c.d"], 8)
        .await;
    let (departed, _) = app
        .endpoint_for(&app.partner_id, &gone.url(), &["e.f"], 8)
        .await;
    let dead = app.publish("c.d", json!({})).await;
    app.wait_for_state(&dead, &broken, "dead", WAIT).await;
    let last = app.publish("e.f", json!({})).await;
    app.attempts_when(&last, &departed, 1).await;
    app.advance(Duration::from_secs(2 * 3600));

    let scrape = app.scrape(&operator).await;
    let endpoint = format!("endpoint=\"{broken}\"");
    let failing_for = sample(&scrape, "hookd_endpoint_failing_seconds", &endpoint).round();
    let disabled = sample(&scrape, "hookd_endpoints_disabled_total", "");
    let dead_now = sample(&scrape, "hookd_deliveries_dead", "");
    assert!(failing_for >= 7200.0, "failing two hours: {failing_for}");
    assert_eq!(disabled, 1.0, "the 410 disabled one endpoint:\n{scrape}");
    assert!(dead_now >= 1.0, "a dead delivery:\n{scrape}");

    let partner = &app.partner_id;
    let mut t = String::new();
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/alerts.yml");
    let _ = write!(
        t,
        "rule_files:\n  - {rules}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n\
         \x20     - series: 'hookd_endpoint_failing_seconds{{instance=\"live\", endpoint=\"{broken}\", partner=\"{partner}\"}}'\n\
         \x20       values: '{failing_for}x80'\n\
         \x20     - series: 'hookd_endpoints_disabled_total{{instance=\"live\"}}'\n\
         \x20       values: '0x30 {disabled}x50'\n\
         \x20     - series: 'hookd_deliveries_dead{{instance=\"live\"}}'\n\
         \x20       values: '0x30 {dead_now}x50'\n\
         \x20   alert_rule_test:\n",
        rules = rules.display()
    );
    let alert = |name: &str, severity: &str, labels: &str, summary: String, description: String| {
        format!(
            "      - eval_time: 75m\n        alertname: {name}\n        exp_alerts:\n\
             \x20         - exp_labels: {{severity: {severity}{labels}}}\n\
             \x20           exp_annotations:\n\
             \x20             summary: \"{summary}\"\n\
             \x20             description: \"{description}\"\n"
        )
    };
    t += &alert(
        "HookdEndpointFailing",
        "info",
        &format!(", endpoint: {broken}, partner: {partner}"),
        format!("Endpoint {broken} of partner {partner} has been failing for over an hour"),
        format!(
            "{broken} has had no success for {}; its owner was sent endpoint.failing. \
             GET /v1/admin/endpoints/{broken} shows its last error.",
            humanized(failing_for as u64)
        ),
    );
    t += &alert(
        "HookdEndpointsDisabled",
        "ticket",
        "",
        "hookd disabled endpoints in the last hour".into(),
        format!(
            "{disabled} endpoints were disabled by hookd (failing past the threshold, or 410 Gone); \
             their owners were sent endpoint.disabled. GET /v1/admin/endpoints?status=disabled lists them."
        ),
    );
    t += &alert(
        "HookdDeadBacklogGrowing",
        "ticket",
        "",
        "Deliveries keep dying".into(),
        format!(
            "{dead_now} more deliveries died in the last hour. Find the endpoints in the dashboard; \
             replay or recover once the receiver is fixed."
        ),
    );
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("live_test.yml");
    std::fs::write(&file, &t).expect("the test file");
    let out = std::process::Command::new("promtool")
        .args(["test", "rules"])
        .arg(&file)
        .output()
        .expect("promtool runs");
    assert!(
        out.status.success(),
        "the alerts on the live scrape:\n{}{}\n{t}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
