//! Incidents opened and resolved by an operator: with the real binary
//! (`hookd incident open|resolve|list`) and the admin API, each reaching
//! the partner's notification URL; refusals are problem+json.

use hookd_test_macros::both_backends;
use serde_json::{Value, json};

use super::{Channel, HEAR_WITHIN, listed, sweeping_hookd};
use crate::harness::{self, TestApp, process::run_off_runtime};

/// `hookd <args> --json` on `app`'s database: exit status and output.
async fn hookd(app: &TestApp, args: &[&str]) -> (Option<i32>, Value, String) {
    let url = &app.running.shared.config.database.url;
    let env = harness::test_env(url, &[("HOOKD_LOG__FILTER", "warn")]);
    let args: Vec<String> = args
        .iter()
        .chain(&["--json"])
        .map(|a| a.to_string())
        .collect();
    let out = run_off_runtime(env, args).await;
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    (out.status.code(), json, stderr)
}

#[both_backends]
async fn an_incident_opened_and_resolved_with_the_binary_reaches_the_partner(backend: Backend) {
    let app = sweeping_hookd(backend, &[]).await;
    let key = app.partner_key().await;
    let channel = Channel::of(&app, &key).await;
    let message = "Deliveries to eu-west are delayed by an upstream network fault.";
    let partner = app.partner_id.clone();
    let (code, opened, err) = hookd(
        &app,
        &[
            "incident",
            "open",
            "--partner",
            &partner,
            "--message",
            message,
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(opened["state"], "open", "{opened}");
    assert_eq!(opened["opened_by"], "operator");

    let heard = channel.hears("hookd.incident.opened", HEAR_WITHIN).await;
    assert_eq!(heard["incident_id"], opened["id"]);
    assert_eq!(heard["cause"], "manual");
    assert_eq!(heard["message"], message);

    let (code, again, err) = hookd(
        &app,
        &[
            "incident",
            "open",
            "--partner",
            &partner,
            "--message",
            "again",
        ],
    )
    .await;
    assert_eq!(
        code,
        Some(1),
        "a second open manual incident is a conflict: {again} {err}"
    );
    let (code, _, err) = hookd(
        &app,
        &[
            "incident",
            "open",
            "--partner",
            "ptn_nobody",
            "--message",
            "x",
        ],
    )
    .await;
    assert_eq!(code, Some(3), "an unknown partner is not found: {err}");

    let (code, list, err) = hookd(&app, &["incident", "list", "--open"]).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(list["data"][0]["id"], opened["id"], "{list}");

    let id = opened["id"].as_str().expect("an id");
    let (code, resolved, err) = hookd(&app, &["incident", "resolve", id]).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(resolved["state"], "resolved");
    let heard = channel.hears("hookd.incident.resolved", HEAR_WITHIN).await;
    assert_eq!(heard["incident_id"], opened["id"]);
    assert_eq!(
        heard["delayed_events"], 0,
        "nothing of the partner's waited"
    );
    let (code, _, _) = hookd(&app, &["incident", "resolve", id]).await;
    assert_eq!(code, Some(1), "resolved already");

    let (code, audit, err) = hookd(&app, &["audit", "list", "--target", id]).await;
    assert_eq!(code, Some(0), "{err}");
    let actions: Vec<&Value> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["action"])
        .collect();
    assert_eq!(actions.len(), 2, "open and resolve are audited: {audit}");
}

#[both_backends]
async fn an_operator_opens_and_resolves_through_the_admin_api_and_the_partner_lists_it(
    backend: Backend,
) {
    let app = sweeping_hookd(backend, &[]).await;
    let operator = app.operator_key().await;
    let key = app.partner_key().await;
    let channel = Channel::of(&app, &key).await;
    let body = json!({"partner_id": app.partner_id, "message": "Planned database failover."});
    let (status, opened, _) = app
        .request("POST", "/v1/admin/incidents", &operator, Some(&body))
        .await;
    assert_eq!(status, 201, "{opened}");
    channel.hears("hookd.incident.opened", HEAR_WITHIN).await;

    let (status, refused, headers) = app
        .request("POST", "/v1/admin/incidents", &operator, Some(&body))
        .await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        harness::answer::header(&headers, "content-type")
            .is_some_and(|c| c.contains("problem+json")),
        "{headers:?}"
    );
    let blank = json!({"partner_id": app.partner_id, "message": "  "});
    let (status, refused, _) = app
        .request("POST", "/v1/admin/incidents", &operator, Some(&blank))
        .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["errors"][0]["field"]
            .as_str()
            .or(refused["field"].as_str()),
        Some("message"),
        "{refused}"
    );
    let (status, _, _) = app
        .request("POST", "/v1/admin/incidents", &key, Some(&body))
        .await;
    assert_eq!(status, 403, "a partner key cannot open one");

    let mine = listed(&app, &key).await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["state"], "open");
    let (_, other_key) = app.another_partner("Globex").await;
    assert!(
        listed(&app, &other_key).await.is_empty(),
        "another partner's are not listed"
    );

    let path = format!(
        "/v1/admin/incidents/{}/resolve",
        opened["id"].as_str().unwrap()
    );
    let (status, resolved, _) = app.request("POST", &path, &operator, None).await;
    assert_eq!(status, 200, "{resolved}");
    channel.hears("hookd.incident.resolved", HEAR_WITHIN).await;
    let (status, _, _) = app
        .request(
            "POST",
            "/v1/admin/incidents/inc_nothing/resolve",
            &operator,
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, all, _) = app
        .request("GET", "/v1/admin/incidents?state=all", &operator, None)
        .await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["data"][0]["state"], "resolved");
}
