//! `hookd check-receiver`: the scorecard as JSON (`--json`) or a table,
//! exit 0 when it passes, 1 when it does not, 2 for what it cannot check.

use std::{net::SocketAddr, process::Output};

use hookd::secret::Secret;
use serde_json::Value;

use super::{Behaviour, receiver};
use crate::harness;

/// `hookd check-receiver <args>` as a child process, with the test
/// configuration (loopback allowed over http) and `extra` on top.
async fn check_receiver(extra: &[(&str, &str)], args: Vec<String>) -> Output {
    let mut env = harness::test_env("sqlite::memory:", &[("HOOKD_LOG__FILTER", "warn")]);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut all = vec!["check-receiver".to_string()];
    all.extend(args);
    harness::process::run_off_runtime(env, all).await
}

fn args(addr: SocketAddr, secret: &Secret) -> Vec<String> {
    vec![
        "--url".into(),
        format!("http://{addr}/hooks"),
        "--secret".into(),
        secret.expose(),
        "--json".into(),
    ]
}

/// The one JSON object a run printed.
fn card(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[hookd_test_macros::test]
async fn the_command_line_prints_the_json_scorecard_and_exits_0_for_a_good_receiver() {
    let secret = Secret::generate();
    let (good, _) = receiver(&secret, Behaviour::Correct);
    let out = check_receiver(&[], args(good, &secret)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let card = card(&out);
    let mut keys: Vec<&String> = card.as_object().expect("an object").keys().collect();
    keys.sort();
    assert_eq!(keys, ["cases", "checked_at", "passed"], "{card}");
    assert_eq!(card["passed"], true);
}

#[hookd_test_macros::test]
async fn the_command_line_exits_1_for_a_receiver_that_fails_a_case_and_names_it() {
    let secret = Secret::generate();
    let (bad, _) = receiver(&secret, Behaviour::AcceptsBadSignatures);
    let out = check_receiver(&[], args(bad, &secret)).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let card = card(&out);
    assert_eq!(card["passed"], false);
    assert_eq!(card["cases"][2]["name"], "wrong_signature");
    assert_eq!(card["cases"][2]["passed"], false);
}

#[hookd_test_macros::test]
async fn without_json_the_command_line_prints_a_table_with_a_line_per_case() {
    let secret = Secret::generate();
    let (good, _) = receiver(&secret, Behaviour::Correct);
    let mut plain = args(good, &secret);
    plain.pop();
    let out = check_receiver(&[], plain).await;
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}");
    assert!(table.contains("ok    valid_event"), "{table}");
    assert!(table.contains("8 of 8 cases passed"), "{table}");
}

#[hookd_test_macros::test]
async fn the_command_line_refuses_a_loopback_receiver_without_the_egress_settings_with_exit_2() {
    let secret = Secret::generate();
    let (addr, inbox) = receiver(&secret, Behaviour::Correct);
    let out = check_receiver(&[("HOOKD_EGRESS__ALLOW_CIDRS", "[]")], args(addr, &secret)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("egress.allow_cidrs"),
        "the refusal names the setting: {stderr}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(inbox.requests(), 0, "nothing was sent");
}

#[hookd_test_macros::test]
async fn the_command_line_refuses_a_secret_that_is_not_one_with_exit_2() {
    let (addr, inbox) = receiver(&Secret::generate(), Behaviour::Correct);
    let out = check_receiver(
        &[],
        vec![
            "--url".into(),
            format!("http://{addr}/hooks"),
            "--secret".into(),
            "nope".into(),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "a bad secret is a usage error");
    assert_eq!(inbox.requests(), 0, "nothing was sent");
}

#[hookd_test_macros::test]
async fn the_command_line_sends_through_the_egress_proxy_and_fails_as_proxy_without_it() {
    use crate::harness::tinyproxy::{Setup, Tinyproxy};
    let Some(mut proxy) = Tinyproxy::start(Setup {
        listen: "127.0.0.6".parse().unwrap(),
        bind: "127.0.0.7".parse().unwrap(),
        basic_auth: None,
    })
    .await
    else {
        return;
    };
    let url = proxy.url(None);
    let via = [("HOOKD_EGRESS__PROXY", url.as_str())];
    let secret = Secret::generate();
    let (good, inbox) = receiver(&secret, Behaviour::Correct);
    let out = check_receiver(&via, args(good, &secret)).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        proxy.connects().contains(&good.to_string()),
        "the proxy was asked for the receiver: {:?}",
        proxy.connects()
    );

    proxy.stop();
    let seen = inbox.requests();
    let out = check_receiver(&via, args(good, &secret)).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "every case fails without the proxy"
    );
    let card = card(&out);
    let got = card["cases"][0]["got"].as_str().unwrap_or_default();
    assert!(
        got.starts_with("proxy: cannot reach the proxy"),
        "the case fails as `proxy`: {card}"
    );
    assert_eq!(inbox.requests(), seen, "nothing went around the proxy");
}
