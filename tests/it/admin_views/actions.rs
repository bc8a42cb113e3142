//! The operator's actions on any partner's objects: each does what the
//! partner's own does and writes exactly one audit entry, which
//! `GET /v1/admin/audit` lists newest first and filters.

use std::time::Duration;

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::{Value, json};

use super::{WAIT, World, audit_count, call, each, get, kind, world};
use crate::harness::{Backend, receiver::Reply, wait_until};
use crate::on_both_backends;

/// The newest audit entry, read over the API, after checking there are
/// `n` entries and that it says who acted, how and from where.
async fn newest_entry(w: &World, n: i64, remote_addr: &str) -> Value {
    assert_eq!(audit_count(&w.app).await, n, "{n} audit entries");
    let page = get(&w.app, "/v1/admin/audit", &w.operator).await;
    let entry = page["data"][0].clone();
    assert_eq!(entry["key_id"], w.operator_id.as_str(), "{entry}");
    assert_eq!(entry["via"], "api", "{entry}");
    assert_eq!(entry["remote_addr"], remote_addr, "{entry}");
    assert!(entry["at"].is_string(), "{entry}");
    entry
}

on_both_backends!(
    an_operator_replay_reaches_the_receiver_and_writes_one_audit_entry,
    |backend: Backend| async move {
        let w = world(backend, &[]).await;
        let path = format!("/v1/admin/deliveries/{}/replay", w.d_a);
        let queued = call(&w.app, ("POST", &path), &w.operator, None, 202).await;
        assert_eq!(queued["delivery_id"], w.d_a.as_str());
        assert_eq!(queued["event_id"], w.ev_a.as_str());
        let got = w.ok.wait_for(2, WAIT).await.expect("the replay arrives");
        assert_eq!(got[1].header("webhook-id"), Some(w.ev_a.as_str()));

        let detail = format!("/v1/admin/deliveries/{}", w.d_a);
        let d = wait_until(WAIT, || async {
            let d = get(&w.app, &detail, &w.operator).await;
            (d["attempts"].as_array().map(Vec::len) == Some(2)).then_some(d)
        })
        .await
        .expect("the manual attempt is recorded");
        assert_eq!(d["attempts"][1]["trigger"], "manual", "{d}");
        assert_eq!(d["attempts"][1]["status_code"], 200, "{d}");

        let entry = newest_entry(&w, 1, "127.0.0.1").await;
        assert_eq!(entry["action"], "delivery.replay");
        assert_eq!(entry["target"], w.d_a.as_str());
        assert_eq!(entry["partner_id"], w.partner_a.as_str());
        assert_eq!(entry["detail"]["replay_id"], queued["replay_id"]);
        assert_eq!(entry["detail"]["event_id"], w.ev_a.as_str());
    }
);

on_both_backends!(
    an_operator_disables_and_enables_any_partners_endpoint_and_each_writes_one_audit_entry,
    |backend: Backend| async move {
        let trust = [("HOOKD_HTTP__TRUST_PROXY", r#"["127.0.0.0/8"]"#)];
        let w = world(backend, &trust).await;
        let partner_view = format!("/v1/endpoints/{}", w.ep_b);
        let path = format!("/v1/admin/endpoints/{}/disable", w.ep_b);
        let off = call(&w.app, ("POST", &path), &w.operator, None, 200).await;
        assert_eq!(off["status"], "disabled");
        assert_eq!(off["disabled_reason"], "disabled by the operator");
        assert_eq!(off["partner_id"], w.partner_b.as_str());
        let seen = get(&w.app, &partner_view, &w.key_b).await;
        assert_eq!(seen["status"], "disabled", "the partner sees it disabled");
        let entry = newest_entry(&w, 1, "127.0.0.1").await;
        assert_eq!(entry["action"], "endpoint.disable");
        assert_eq!(entry["target"], w.ep_b.as_str());
        assert_eq!(entry["partner_id"], w.partner_b.as_str());
        assert_eq!(entry["detail"]["reason"], "disabled by the operator");
        assert_eq!(entry["detail"]["previous_status"], "active");

        // Through a trusted proxy, the address it forwards is the client's.
        w.app.advance(Duration::from_secs(1));
        let path = format!("/v1/admin/endpoints/{}/enable", w.ep_b);
        let mut res = w
            .app
            .http
            .post(format!("{}{path}", w.app.base_url))
            .bearer_auth(&w.operator)
            .insert_header(("x-forwarded-for", "203.0.113.9"))
            .send_json(&json!({"reason": "receiver fixed"}))
            .await
            .expect("the enable request completes");
        let body: Value = res.json().await.expect("a JSON answer");
        assert_eq!(res.status().as_u16(), 200, "{body}");
        assert_eq!(body["status"], "active");
        assert_eq!(body["disabled_reason"], Value::Null);
        let seen = get(&w.app, &partner_view, &w.key_b).await;
        assert_eq!(seen["status"], "active", "the partner sees it active again");
        let entry = newest_entry(&w, 2, "203.0.113.9").await;
        assert_eq!(entry["action"], "endpoint.enable");
        assert_eq!(entry["target"], w.ep_b.as_str());
        assert_eq!(entry["detail"]["reason"], "receiver fixed");
        assert_eq!(entry["detail"]["previous_status"], "disabled");

        w.app.advance(Duration::from_secs(1));
        let path = format!("/v1/admin/endpoints/{}/disable", w.ep_drop);
        let why = json!({"reason": "abuse report 42"});
        let off = call(&w.app, ("POST", &path), &w.operator, Some(why), 200).await;
        assert_eq!(off["disabled_reason"], "abuse report 42");
        let entry = newest_entry(&w, 3, "127.0.0.1").await;
        assert_eq!(entry["detail"]["reason"], "abuse report 42");

        let long = "x".repeat(501);
        for (bad, field) in [
            (json!({"reason": "a\u{1b}[31m"}), "reason"),
            (json!({"reason": long}), "reason"),
            (json!({"colour": 1}), "colour"),
        ] {
            let p = call(&w.app, ("POST", &path), &w.operator, Some(bad), 422).await;
            assert_eq!(p["field"], field, "{p}");
        }
        assert_eq!(
            audit_count(&w.app).await,
            3,
            "a refused action is not audited"
        );
    }
);

on_both_backends!(
    an_operator_recovers_any_partners_endpoint_within_the_replay_window_and_writes_one_audit_entry,
    |backend: Backend| async move {
        let w = world(backend, &[]).await;
        w.dropping.set_default(Reply::status(200));
        // Recover takes what was created before `until` (default now).
        w.app.advance(Duration::from_secs(1));
        let path = format!("/v1/admin/endpoints/{}/recover", w.ep_drop);
        let now = w.app.clock.now_ms();
        for bad in [
            json!({"since": format_time(now - 31 * 86_400_000)}),
            json!({"since": format_time(now), "until": format_time(now - 1000)}),
            json!({}),
        ] {
            let p = call(&w.app, ("POST", &path), &w.operator, Some(bad), 422).await;
            assert!(["out-of-range", "validation"].contains(&kind(&p)), "{p}");
        }
        assert_eq!(
            audit_count(&w.app).await,
            0,
            "a refused recover is not audited"
        );

        let since = format_time(w.start - 60_000);
        let body = json!({"since": since});
        let answer = call(&w.app, ("POST", &path), &w.operator, Some(body), 202).await;
        assert_eq!(answer["replayed"], 1, "B's failed delivery to it: {answer}");
        let got = w
            .dropping
            .wait_for(2, WAIT)
            .await
            .expect("the replay arrives");
        assert_eq!(got[1].header("webhook-id"), Some(w.ev_b.as_str()));

        let entry = newest_entry(&w, 1, "127.0.0.1").await;
        assert_eq!(entry["action"], "endpoint.recover");
        assert_eq!(entry["target"], w.ep_drop.as_str());
        assert_eq!(entry["partner_id"], w.partner_b.as_str());
        assert_eq!(entry["detail"]["since"], since.as_str());
        assert_eq!(entry["detail"]["until"], format_time(now).as_str());
        assert_eq!(entry["detail"]["replayed"], 1);
    }
);

on_both_backends!(
    the_audit_log_lists_entries_newest_first_and_filters_by_action_target_and_partner,
    |backend: Backend| async move {
        let w = world(backend, &[]).await;
        let steps = [
            format!("/v1/admin/deliveries/{}/replay", w.d_a),
            format!("/v1/admin/endpoints/{}/disable", w.ep_b),
            format!("/v1/admin/endpoints/{}/enable", w.ep_b),
            format!("/v1/admin/endpoints/{}/disable", w.ep_a),
        ];
        for path in &steps {
            let (status, body, _) = w.app.request("POST", path, &w.operator, None).await;
            assert!(status == 200 || status == 202, "{path}: {body}");
            w.app.advance(Duration::from_secs(1));
        }
        let (a, b) = (w.partner_a.as_str(), w.partner_b.as_str());
        let log = |query: String| {
            let w = &w;
            async move { get(&w.app, &format!("/v1/admin/audit?{query}"), &w.operator).await }
        };
        let all = log(String::new()).await;
        assert_eq!(
            each(&all, "action"),
            [
                "endpoint.disable",
                "endpoint.enable",
                "endpoint.disable",
                "delivery.replay"
            ],
            "newest first: {all}"
        );
        assert_eq!(
            each(&all, "target"),
            [
                w.ep_a.as_str(),
                w.ep_b.as_str(),
                w.ep_b.as_str(),
                w.d_a.as_str()
            ]
        );
        assert_eq!(each(&all, "partner_id"), [a, b, b, a]);

        let cases = [
            (
                "action=endpoint.disable".to_string(),
                vec![&w.ep_a, &w.ep_b],
            ),
            (format!("target={}", w.ep_b), vec![&w.ep_b, &w.ep_b]),
            (format!("partner_id={a}"), vec![&w.ep_a, &w.d_a]),
            (
                format!("partner_id={b}&action=endpoint.enable"),
                vec![&w.ep_b],
            ),
            ("action=endpoint.recover".to_string(), vec![]),
        ];
        for (query, want) in cases {
            let page = log(query.clone()).await;
            assert_eq!(
                each(&page, "target").iter().collect::<Vec<_>>(),
                want,
                "?{query}"
            );
        }

        let first = log("limit=3".into()).await;
        let cursor = first["next_cursor"]
            .as_str()
            .expect("a full page has a cursor");
        let rest = log(format!("limit=3&after={cursor}")).await;
        assert_eq!(
            each(&rest, "target"),
            [w.d_a.as_str()],
            "the cursor continues: {rest}"
        );
        assert_eq!(rest["next_cursor"], Value::Null);
        call(
            &w.app,
            ("GET", "/v1/admin/audit?colour=red"),
            &w.operator,
            None,
            422,
        )
        .await;
    }
);
