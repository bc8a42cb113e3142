//! The operator's actions on any partner's objects: each does what the
//! partner's own does and writes exactly one audit entry (the log itself is
//! `audit_log`).

use std::time::Duration;

use hookd::domain::{clock::Clock as _, event::format_time};
use serde_json::{Value, json};

use super::{World, audit_count, call, get, kind, world};
use crate::harness::{WAIT, read_answer, receiver::Reply, wait_until};
use hookd_test_macros::both_backends;

/// The newest audit entry, read over the API, after checking there are
/// `n` entries and that it says it is `action` on `target`, who acted, how
/// and from where.
async fn newest_entry(w: &World, n: i64, remote_addr: &str, action: &str, target: &str) -> Value {
    assert_eq!(audit_count(&w.app).await, n, "{n} audit entries");
    let page = w.get("/v1/admin/audit").await;
    let entry = page["data"][0].clone();
    assert_eq!(entry["action"], action, "{entry}");
    assert_eq!(entry["target"], target, "{entry}");
    assert_eq!(entry["key_id"], w.operator_id.as_str(), "{entry}");
    assert_eq!(entry["via"], "api", "{entry}");
    assert_eq!(entry["remote_addr"], remote_addr, "{entry}");
    assert!(entry["at"].is_string(), "{entry}");
    entry
}

/// `POST /v1/admin/endpoints/{endpoint}/{action}` as the operator, with
/// `body`, which must answer 200; returns the endpoint as answered.
async fn operator_sets(w: &World, endpoint: &str, action: &str, body: Option<Value>) -> Value {
    let path = format!("/v1/admin/endpoints/{endpoint}/{action}");
    call(&w.app, ("POST", &path), &w.operator, body, 200).await
}

/// The status partner B reads for its endpoint `ep_b`.
async fn status_partner_b_sees(w: &World) -> Value {
    let seen = get(&w.app, &format!("/v1/endpoints/{}", w.ep_b), &w.key_b).await;
    seen["status"].clone()
}

/// `ep_b` disabled by the operator, then (a second later) enabled again
/// through a trusted proxy that forwards the client's address; returns
/// the enable's status and answer.
async fn enabled_through_a_proxy(w: &World) -> (u16, Value) {
    operator_sets(w, &w.ep_b, "disable", None).await;
    w.app.advance(Duration::from_secs(1));
    let path = format!("/v1/admin/endpoints/{}/enable", w.ep_b);
    let sent = w
        .app
        .http
        .post(format!("{}{path}", w.app.base_url))
        .bearer_auth(&w.operator)
        .insert_header(("x-forwarded-for", "203.0.113.9"))
        .send_json(&json!({"reason": "receiver fixed"}))
        .await
        .expect("the enable request completes");
    let (status, body, _) = read_answer(sent).await;
    (status, body)
}

/// Trusting the test's own address as a proxy.
const TRUSTED_PROXY: [(&str, &str); 1] = [("HOOKD_HTTP__TRUST_PROXY", r#"["127.0.0.0/8"]"#)];

world_test!(
    an_operator_replay_reaches_the_receiver_and_writes_one_audit_entry,
    |w: World| async move {
        let path = format!("/v1/admin/deliveries/{}/replay", w.d_a);
        let queued = call(&w.app, ("POST", &path), &w.operator, None, 202).await;
        assert_eq!(queued["delivery_id"], w.d_a.as_str());
        assert_eq!(queued["event_id"], w.ev_a.as_str());
        let got = w.ok.wait_for(2, WAIT).await.expect("the replay arrives");
        assert_eq!(got[1].header("webhook-id"), Some(w.ev_a.as_str()));

        let detail = format!("/v1/admin/deliveries/{}", w.d_a);
        let d = wait_until(WAIT, || async {
            let d = w.get(&detail).await;
            (d["attempts"].as_array().map(Vec::len) == Some(2)).then_some(d)
        })
        .await
        .expect("the manual attempt is recorded");
        assert_eq!(d["attempts"][1]["trigger"], "manual", "{d}");
        assert_eq!(d["attempts"][1]["status_code"], 200, "{d}");

        let entry = newest_entry(&w, 1, "127.0.0.1", "delivery.replay", &w.d_a).await;
        assert_eq!(entry["partner_id"], w.partner_a.as_str());
        assert_eq!(entry["detail"]["replay_id"], queued["replay_id"]);
        assert_eq!(entry["detail"]["event_id"], w.ev_a.as_str());
    }
);

world_test!(
    an_operator_disables_another_partners_endpoint_and_that_partner_sees_it_disabled,
    |w: World| async move {
        assert_eq!(status_partner_b_sees(&w).await, "active", "before");
        let off = operator_sets(&w, &w.ep_b, "disable", None).await;
        assert_eq!(off["status"], "disabled");
        assert_eq!(off["disabled_reason"], "disabled by the operator");
        assert_eq!(off["partner_id"], w.partner_b.as_str());
        let seen = status_partner_b_sees(&w).await;
        assert_eq!(seen, "disabled", "the partner sees it disabled");
    }
);

world_test!(
    an_operators_disable_writes_one_audit_entry_with_the_status_it_ended,
    |w: World| async move {
        operator_sets(&w, &w.ep_b, "disable", None).await;
        let entry = newest_entry(&w, 1, "127.0.0.1", "endpoint.disable", &w.ep_b).await;
        assert_eq!(entry["partner_id"], w.partner_b.as_str());
        assert_eq!(entry["detail"]["reason"], "disabled by the operator");
        assert_eq!(entry["detail"]["previous_status"], "active");
    }
);

#[both_backends]
async fn an_operator_enables_a_disabled_endpoint_and_its_partner_sees_it_active_again(
    backend: Backend,
) {
    let w = world(backend, &TRUSTED_PROXY).await;
    let (status, body) = enabled_through_a_proxy(&w).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "active");
    assert_eq!(body["disabled_reason"], Value::Null);
    let seen = status_partner_b_sees(&w).await;
    assert_eq!(seen, "active", "the partner sees it active again");
}

#[both_backends]
async fn an_action_through_a_trusted_proxy_is_audited_from_the_address_it_forwards(
    backend: Backend,
) {
    let w = world(backend, &TRUSTED_PROXY).await;
    enabled_through_a_proxy(&w).await;
    let entry = newest_entry(&w, 2, "203.0.113.9", "endpoint.enable", &w.ep_b).await;
    assert_eq!(entry["detail"]["reason"], "receiver fixed");
    assert_eq!(entry["detail"]["previous_status"], "disabled");
}

world_test!(
    the_reason_an_operator_gives_for_a_disable_is_shown_and_audited,
    |w: World| async move {
        let why = json!({"reason": "abuse report 42"});
        let off = operator_sets(&w, &w.ep_drop, "disable", Some(why)).await;
        assert_eq!(off["disabled_reason"], "abuse report 42");
        let entry = newest_entry(&w, 1, "127.0.0.1", "endpoint.disable", &w.ep_drop).await;
        assert_eq!(entry["detail"]["reason"], "abuse report 42");
    }
);

world_test!(
    a_disable_with_a_bad_reason_or_an_unknown_field_is_refused_and_not_audited,
    |w: World| async move {
        let path = format!("/v1/admin/endpoints/{}/disable", w.ep_drop);
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
            0,
            "a refused action is not audited"
        );
        let ep = w.get(&format!("/v1/admin/endpoints/{}", w.ep_drop)).await;
        assert_eq!(ep["status"], "active", "a refused disable disables nothing");
    }
);

world_test!(
    an_operator_recover_without_a_range_inside_the_replay_window_is_refused_and_not_audited,
    |w: World| async move {
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
        w.dropping.stays_at(1).await;
    }
);

world_test!(
    an_operator_recovers_any_partners_endpoint_and_writes_one_audit_entry,
    |w: World| async move {
        w.dropping.set_default(Reply::status(200));
        // Recover takes what was created before `until` (default now).
        w.app.advance(Duration::from_secs(1));
        let path = format!("/v1/admin/endpoints/{}/recover", w.ep_drop);
        let now = w.app.clock.now_ms();
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

        let entry = newest_entry(&w, 1, "127.0.0.1", "endpoint.recover", &w.ep_drop).await;
        assert_eq!(entry["partner_id"], w.partner_b.as_str());
        assert_eq!(entry["detail"]["since"], since.as_str());
        assert_eq!(entry["detail"]["until"], format_time(now).as_str());
        assert_eq!(entry["detail"]["replayed"], 1);
    }
);
