//! `v1a` signatures: Ed25519 over `{id}.{timestamp}.{body}`, verified with
//! the endpoint's published public key by Python's `cryptography` (an
//! implementation hookd shares nothing with).

use std::process::Command;

use hookd::domain::clock::Clock as _;
use serde_json::json;

use super::{create, expect_status};
use crate::harness::{WAIT, receiver::Received, signatures::verifies, skip::skipping, spawn_app};
use hookd_test_macros::both_backends;

/// Python's verdict on every `v1a` entry of `r` under `public_key`
/// (`whpk_…`): one `true`/`false` per entry; `None` if Python or its
/// `cryptography` package is missing (the test is then skipped, or fails
/// under CI).
fn python_verdicts(public_key: &str, r: &Received) -> Option<Vec<bool>> {
    const VERIFY: &str = r#"
import base64, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature
public_key, msg_id, timestamp, header = sys.argv[1:5]
body = sys.stdin.buffer.read()
key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key.removeprefix("whpk_")))
content = msg_id.encode() + b"." + timestamp.encode() + b"." + body
for entry in header.split():
    scheme, _, signature = entry.partition(",")
    if scheme != "v1a":
        continue
    try:
        key.verify(base64.b64decode(signature), content)
        print("true")
    except InvalidSignature:
        print("false")
"#;
    let python = std::env::var("HOOKD_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = match Command::new(&python)
        .arg("-c")
        .arg(VERIFY)
        .args([
            public_key,
            r.header("webhook-id").unwrap_or(""),
            r.header("webhook-timestamp").unwrap_or(""),
            r.header("webhook-signature").unwrap_or(""),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            skipping("verifying v1a with Python", &format!("no {python}: {e}"));
            return None;
        }
    };
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&r.body)
        .expect("the body goes to Python");
    let out = child.wait_with_output().expect("Python runs");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'cryptography'") {
            skipping(
                "verifying v1a with Python",
                "python3 lacks `cryptography` (apt-get install python3-cryptography)",
            );
            return None;
        }
        panic!("the Python verifier failed: {err}");
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l == "true")
            .collect(),
    )
}

#[both_backends]
async fn a_v1a_endpoint_publishes_a_public_key_that_verifies_its_deliveries(backend: Backend) {
    let app = spawn_app(backend).await;
    let key = app.partner_key().await;
    let receiver = crate::harness::receiver::Receiver::start().await;
    let created = create(
        &app,
        &key,
        &receiver.url(),
        json!({"signature_scheme": "v1a"}),
    )
    .await;
    assert!(
        created.get("secret").is_none(),
        "a v1a endpoint has no shared secret: {created}"
    );
    let public_key = created["public_key"]
        .as_str()
        .expect("a public key")
        .to_string();
    assert!(public_key.starts_with("whpk_"), "{public_key}");
    let id = created["id"].as_str().unwrap();
    let auth = expect_status(
        &app.request("GET", &format!("/v1/endpoints/{id}/auth"), &key, None)
            .await,
        200,
    );
    assert_eq!(
        auth["public_keys"][0]["public_key"],
        public_key.as_str(),
        "published: {auth}"
    );

    app.publish("a.b", json!({"amount": "12.50"})).await;
    let got = receiver.wait_for(1, WAIT).await.expect("a delivery");
    let signature = got[0].header("webhook-signature").unwrap_or("");
    assert!(signature.starts_with("v1a,"), "{signature}");
    let Some(verdicts) = python_verdicts(&public_key, &got[0]) else {
        return;
    };
    assert_eq!(verdicts, [true], "Python verifies the v1a signature");

    let mut forged = got[0].clone();
    forged.body = br#"{"amount":"1250.00"}"#.to_vec();
    assert_eq!(
        python_verdicts(&public_key, &forged),
        Some(vec![false]),
        "a changed body does not verify"
    );
}

#[both_backends]
async fn rotating_from_v1_to_v1a_signs_with_both_during_the_overlap(backend: Backend) {
    let app = spawn_app(backend).await;
    let key = app.partner_key().await;
    let receiver = crate::harness::receiver::Receiver::start().await;
    let created = create(&app, &key, &receiver.url(), json!({})).await;
    let old = hookd::secret::Secret::parse(created["secret"].as_str().unwrap()).unwrap();
    let id = created["id"].as_str().unwrap();
    app.advance(std::time::Duration::from_secs(1));
    let rotated = expect_status(
        &app.request(
            "POST",
            &format!("/v1/endpoints/{id}/secret/rotate"),
            &key,
            Some(&json!({"scheme": "v1a"})),
        )
        .await,
        200,
    );
    let public_key = rotated["public_key"]
        .as_str()
        .expect("the new public key")
        .to_string();
    assert!(rotated.get("secret").is_none(), "{rotated}");

    app.publish("a.b", json!({})).await;
    let got = receiver.wait_for(1, WAIT).await.expect("a delivery");
    let schemes: Vec<&str> = got[0]
        .header("webhook-signature")
        .unwrap_or("")
        .split(' ')
        .filter_map(|e| e.split_once(',').map(|(s, _)| s))
        .collect();
    assert_eq!(schemes, ["v1a", "v1"], "newest first, both schemes");
    assert!(
        verifies(&old, &got[0], app.clock.now_ms()),
        "a receiver still holding the v1 secret accepts it"
    );
    if let Some(verdicts) = python_verdicts(&public_key, &got[0]) {
        assert_eq!(
            verdicts,
            [true],
            "a receiver with the public key accepts it"
        );
    }
}
