//! The operator's command line beside a running `hookd serve` (the real
//! binary): what the CLI changes, the API and the engine see at once, and
//! it is audited `via: cli`; keys are listed without secrets and a revoked
//! one is refused by the API's next request; not found exits 3, bad input 2.

mod bed;

use std::time::Duration;

use serde_json::{Value, json};

use crate::{
    cli::{hookd, json_of},
    harness::{self, Backend},
    on_both_backends,
};
use bed::{Bed, assert_refused, cli_entry, stderr};
on_both_backends!(
    an_endpoint_disabled_by_the_cli_gets_no_deliveries_and_the_api_shows_it_disabled,
    |backend: Backend| async move {
        let bed = Bed::start(backend, &["/a", "/b"]).await;
        let (a, b) = (&bed.store.endpoint_ids[0], &bed.store.endpoint_ids[1]);
        let op = bed.store.operator_key.clone();

        let out = bed
            .cli(&[
                "endpoint",
                "disable",
                a,
                "--reason",
                "maintenance window",
                "--json",
            ])
            .await;
        let shown = json_of(&out);
        assert_eq!(shown["status"], "disabled", "{shown}");
        assert_eq!(shown["disabled_reason"], "maintenance window");
        let (status, api) = bed
            .api("GET", &format!("/v1/admin/endpoints/{a}"), &op, None)
            .await;
        assert_eq!((status, &api["status"]), (200, &json!("disabled")), "{api}");
        assert_eq!(api["disabled_reason"], "maintenance window");

        // One event for both endpoints: once the active one has it, the
        // fanout is done, and the disabled one got nothing.
        let event = bed.publish().await;
        harness::wait_until(Duration::from_secs(20), || async {
            (bed.got("/b", &event) > 0).then_some(())
        })
        .await
        .expect("the active endpoint gets the event");
        assert_eq!(
            bed.got("/a", &event),
            0,
            "the disabled endpoint gets nothing"
        );
        let detail = json_of(&bed.cli(&["event", "get", &event, "--json"]).await);
        let to: Vec<&Value> = detail["deliveries"]
            .as_array()
            .expect("deliveries")
            .iter()
            .map(|d| &d["endpoint_id"])
            .collect();
        assert_eq!(
            to,
            vec![&json!(b)],
            "only the active endpoint has a delivery: {detail}"
        );

        let entry = cli_entry(&bed.audit(a).await, "endpoint.disable");
        assert_eq!(entry["detail"]["reason"], "maintenance window", "{entry}");
        assert_eq!(entry["detail"]["previous_status"], "active", "{entry}");

        let shown = json_of(&bed.cli(&["endpoint", "enable", a, "--json"]).await);
        assert_eq!(shown["status"], "active", "{shown}");
        let (_, api) = bed
            .api("GET", &format!("/v1/admin/endpoints/{a}"), &op, None)
            .await;
        assert_eq!(api["status"], "active", "{api}");
        let again = bed.publish().await;
        harness::wait_until(Duration::from_secs(20), || async {
            (bed.got("/a", &again) > 0).then_some(())
        })
        .await
        .expect("enabled again, the endpoint gets the next event");
        cli_entry(&bed.audit(a).await, "endpoint.enable");
    }
);

on_both_backends!(
    a_key_revoked_by_the_cli_is_refused_by_the_api_at_once_and_no_list_shows_a_secret,
    |backend: Backend| async move {
        let bed = Bed::start(backend, &["/a"]).await;
        let key = bed.store.partner_key.clone();
        let (status, _) = bed.api("GET", "/v1/endpoints", &key, None).await;
        assert_eq!(status, 200, "the partner key works");

        let out = bed.cli(&["key", "list", "--json"]).await;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let listed = json_of(&out);
        for k in [
            &bed.store.partner_key,
            &bed.store.service_key,
            &bed.store.operator_key,
        ] {
            assert!(
                !text.contains(k.as_str()),
                "a key list shows no key: {text}"
            );
        }
        let plain = bed.cli(&["key", "list"]).await;
        assert!(
            !String::from_utf8_lossy(&plain.stdout).contains(key.as_str()),
            "nor does the table"
        );
        let mine = listed["data"]
            .as_array()
            .expect("a page")
            .iter()
            .find(|k| {
                k["prefix"]
                    .as_str()
                    .is_some_and(|p| key.starts_with(p.trim_end_matches('…')))
            })
            .unwrap_or_else(|| panic!("the partner key is listed by its prefix: {listed}"))
            .clone();
        assert_eq!(mine["role"], "partner");
        assert_eq!(mine["partner_id"], json!(bed.store.partner_id));
        let id = mine["id"].as_str().expect("an id").to_string();
        let of_partner = json_of(
            &bed.cli(&["key", "list", "--partner", &bed.store.partner_id, "--json"])
                .await,
        );
        assert_eq!(
            of_partner["data"].as_array().map(Vec::len),
            Some(1),
            "{of_partner}"
        );

        let revoked = json_of(&bed.cli(&["key", "revoke", &id, "--json"]).await);
        assert!(revoked["revoked_at"].is_string(), "{revoked}");
        let (status, body) = bed.api("GET", "/v1/endpoints", &key, None).await;
        assert_eq!(status, 401, "the API refuses a revoked key at once: {body}");

        let again = bed.cli(&["key", "revoke", &id]).await;
        let err = assert_refused(&again, 3, "a second revoke");
        assert!(err.contains("already revoked"), "{err}");
        let active = json_of(&bed.cli(&["key", "list", "--json"]).await);
        assert!(
            !active.to_string().contains(&id),
            "revoked keys are left out by default: {active}"
        );
        let all = json_of(&bed.cli(&["key", "list", "--all", "--json"]).await);
        assert!(all.to_string().contains(&id), "--all shows them: {all}");
        let entry = cli_entry(&bed.audit(&id).await, "key.revoke");
        assert_eq!(entry["partner_id"], json!(bed.store.partner_id), "{entry}");
    }
);

#[actix_rt::test]
async fn not_found_exits_3_and_bad_input_exits_2_and_neither_changes_anything() {
    let bed = Bed::start(Backend::Sqlite, &["/a"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    for args in [
        vec!["endpoint", "get", "ep_nope"],
        vec!["endpoint", "disable", "ep_nope"],
        vec!["endpoint", "update", "ep_nope", "--concurrency", "2"],
        vec!["endpoint", "delete", "ep_nope", "--yes"],
        vec!["delivery", "get", "dlv_nope"],
        vec!["delivery", "replay", "dlv_nope"],
        vec!["event", "get", "evt_nope"],
        vec!["partner", "get", "nope"],
        vec![
            "partner",
            "update",
            "nope",
            "--notification-email",
            "ops@example.com",
        ],
        vec!["key", "revoke", "key_nope"],
        vec!["key", "create", "--partner", "nope"],
    ] {
        let err = assert_refused(&bed.cli(&args).await, 3, &args.join(" "));
        assert!(err.contains("does not exist"), "{}: {err}", args.join(" "));
    }
    let bad: [(Vec<&str>, &str); 9] = [
        (
            vec!["endpoint", "update", &a, "--concurrency", "0"],
            "--concurrency",
        ),
        (
            vec!["endpoint", "update", &a, "--url", "http://10.0.0.1/hooks"],
            "--url",
        ),
        (
            vec!["endpoint", "update", &a, "--event-types", "not a type"],
            "--event-types",
        ),
        (vec!["endpoint", "update", &a], "nothing to change"),
        (vec!["endpoint", "delete", &a], "--yes"),
        (vec!["delivery", "list", "--state", "bogus"], "--state"),
        (vec!["delivery", "list", "--limit", "0"], "--limit"),
        (
            vec!["partner", "list", "--after", "not-a-cursor"],
            "--after",
        ),
        (
            vec!["partner", "create", "--name", "X", "--id", "no spaces"],
            "--id",
        ),
    ];
    for (args, named) in bad {
        let err = assert_refused(&bed.cli(&args).await, 2, &args.join(" "));
        assert!(
            err.contains(named),
            "{}: the error names {named}: {err}",
            args.join(" ")
        );
    }
    // Refused, so unchanged: the endpoint is still there as it was.
    let (status, api) = bed
        .api(
            "GET",
            &format!("/v1/admin/endpoints/{a}"),
            &bed.store.operator_key,
            None,
        )
        .await;
    assert_eq!(status, 200, "a refused delete deletes nothing: {api}");
    assert_eq!(api["concurrency"], 4, "{api}");
    assert!(bed.audit(&a).await.is_empty(), "nothing refused is audited");
    let usage = bed.cli(&["endpoint", "get"]).await;
    assert_eq!(
        usage.status.code(),
        Some(2),
        "a missing argument is bad input"
    );
}

#[actix_rt::test]
async fn partners_listed_shown_and_updated_by_the_cli_are_what_the_api_shows() {
    let bed = Bed::start(Backend::Sqlite, &[]).await;
    let op = bed.store.operator_key.clone();
    let created = json_of(
        &bed.cli(&[
            "partner", "create", "--id", "acme-two", "--name", "Acme Two", "--json",
        ])
        .await,
    );
    assert_eq!(created["id"], "acme-two", "{created}");

    let first = json_of(
        &bed.cli(&["partner", "list", "--limit", "1", "--json"])
            .await,
    );
    assert_eq!(
        first["data"][0]["id"],
        json!(bed.store.partner_id),
        "{first}"
    );
    let cursor = first["next_cursor"]
        .as_str()
        .expect("a full page points on");
    let second = json_of(
        &bed.cli(&[
            "partner", "list", "--limit", "1", "--after", cursor, "--json",
        ])
        .await,
    );
    assert_eq!(second["data"][0]["id"], "acme-two", "{second}");
    let (_, api) = bed.api("GET", "/v1/admin/partners", &op, None).await;
    let all = json_of(&bed.cli(&["partner", "list", "--json"]).await);
    assert_eq!(all["data"], api["data"], "the CLI lists what the API lists");

    let updated = json_of(
        &bed.cli(&[
            "partner",
            "update",
            "acme-two",
            "--notification-email",
            "ops@example.com",
            "--json",
        ])
        .await,
    );
    assert_eq!(
        updated["notification_email"], "ops@example.com",
        "{updated}"
    );
    let (_, api) = bed
        .api("GET", "/v1/admin/partners/acme-two", &op, None)
        .await;
    assert_eq!(api["notification_email"], "ops@example.com", "{api}");
    let shown = json_of(&bed.cli(&["partner", "get", "acme-two", "--json"]).await);
    assert_eq!(shown, api, "`partner get` is the API's answer");
    let entry = cli_entry(&bed.audit("acme-two").await, "partner.update");
    assert_eq!(
        entry["detail"]["notification_email"], "ops@example.com",
        "{entry}"
    );

    let removed = json_of(
        &bed.cli(&[
            "partner",
            "update",
            "acme-two",
            "--no-notification-email",
            "--json",
        ])
        .await,
    );
    assert!(removed["notification_email"].is_null(), "{removed}");
}

#[actix_rt::test]
async fn deliveries_found_shown_and_replayed_by_the_cli_reach_the_receiver_again() {
    let bed = Bed::start(Backend::Sqlite, &["/a"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    let moved = format!("{}/moved", bed.receiver.url());
    let updated = json_of(
        &bed.cli(&[
            "endpoint",
            "update",
            &a,
            "--url",
            &moved,
            "--concurrency",
            "2",
            "--json",
        ])
        .await,
    );
    assert_eq!(
        (&updated["url"], &updated["concurrency"]),
        (&json!(moved), &json!(2)),
        "{updated}"
    );
    cli_entry(&bed.audit(&a).await, "endpoint.update");

    let event = bed.publish().await;
    harness::wait_until(Duration::from_secs(20), || async {
        (bed.got("/moved", &event) > 0).then_some(())
    })
    .await
    .expect("the engine delivers to the URL the CLI set");
    let delivery = harness::wait_until(Duration::from_secs(20), || async {
        let out = bed
            .cli(&[
                "delivery",
                "list",
                "--endpoint",
                &a,
                "--state",
                "delivered",
                "--json",
            ])
            .await;
        let page = json_of(&out);
        page["data"][0]["id"].as_str().map(str::to_string)
    })
    .await
    .expect("the delivery is listed as delivered");
    let detail = json_of(&bed.cli(&["delivery", "get", &delivery, "--json"]).await);
    assert_eq!(detail["attempts"][0]["status_code"], 200, "{detail}");
    assert_eq!(detail["event_id"], json!(event), "{detail}");

    let queued = json_of(&bed.cli(&["delivery", "replay", &delivery, "--json"]).await);
    assert_eq!(queued["sends"], "now", "{queued}");
    harness::wait_until(Duration::from_secs(20), || async {
        (bed.got("/moved", &event) > 1).then_some(())
    })
    .await
    .expect("the replay reaches the receiver again, with the same webhook-id");
    cli_entry(&bed.audit(&delivery).await, "delivery.replay");

    let gone = json_of(
        &bed.cli(&["endpoint", "delete", &a, "--yes", "--json"])
            .await,
    );
    assert_eq!(gone, json!({"id": a, "deleted": true}));
    let (status, _) = bed
        .api(
            "GET",
            &format!("/v1/admin/endpoints/{a}"),
            &bed.store.operator_key,
            None,
        )
        .await;
    assert_eq!(status, 404, "the API no longer has it");
    cli_entry(&bed.audit(&a).await, "endpoint.delete");
}

#[test]
fn an_operator_command_on_a_fresh_database_prints_no_migration_chatter() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let env = vec![(
        "HOOKD_DATABASE__URL".to_string(),
        format!("sqlite://{}/hookd.db", dir.path().display()),
    )];
    let out = hookd(&env, &["partner", "list"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        !err.to_lowercase().contains("migration"),
        "the default log level says nothing of migrations: {err}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "(none)");
    let migrate = hookd(&env, &["migrate"]);
    assert!(migrate.status.success(), "{}", stderr(&migrate));
    assert!(
        String::from_utf8_lossy(&migrate.stdout).contains("is up to date"),
        "`migrate` says in one line what it did"
    );
}
