//! An endpoint's receiver credentials set by the CLI beside a running
//! `serve`: secrets come from files, the next delivery carries the static
//! header and a bearer token from the OAuth2 token endpoint, `auth show`
//! redacts every secret, each change is audited `endpoint.auth` without
//! one, and a certificate whose key does not match is refused (exit 2).

use std::path::Path;

use hookd_test_macros::both_backends;
use serde_json::json;

use super::bed::{Bed, assert_refused, cli_entry};
use crate::harness::{
    receiver::{Receiver, Reply},
    tls::TestCa,
};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the file is written");
    path.display().to_string()
}

#[both_backends]
async fn headers_and_oauth2_set_by_the_cli_reach_the_receiver_and_are_shown_redacted(
    backend: Backend,
) {
    let bed = Bed::start(backend, &["/a"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    let dir = tempfile::tempdir().expect("a temp dir");
    let headers = write(dir.path(), "headers", "X-Gateway-Key: gw-cli-s3cret\n");
    let set = bed
        .cli_json(&[
            "endpoint",
            "auth",
            "headers",
            &a,
            "--header-file",
            &headers,
            "--header",
            "X-Tenant: acme",
        ])
        .await;
    assert_eq!(
        set["headers"],
        json!({"x-gateway-key": "[redacted]", "x-tenant": "[redacted]"}),
        "{set}"
    );

    let issuer = Receiver::start().await;
    let token = json!({"access_token": "cli-token", "token_type": "Bearer", "expires_in": 3600});
    issuer.set_default(Reply::with_body(200, token.to_string()));
    let secret = write(dir.path(), "secret", "oauth-cli-s3cret\n");
    let token_url = format!("{}/token", issuer.url());
    let set = bed
        .cli_json(&[
            "endpoint",
            "auth",
            "oauth2",
            &a,
            "--token-url",
            &token_url,
            "--client-id",
            "cli-client",
            "--client-secret-file",
            &secret,
            "--scope",
            "hooks",
        ])
        .await;
    assert_eq!(set["oauth2"]["client_id"], "cli-client", "{set}");
    assert_eq!(set["oauth2"]["client_secret"], "[redacted]", "{set}");

    let event = bed.publish().await;
    bed.receives("/a", &event, 0).await;
    let got = bed.receiver.received();
    let delivery = got.iter().find(|r| r.path == "/a").expect("the delivery");
    assert_eq!(delivery.header("x-gateway-key"), Some("gw-cli-s3cret"));
    assert_eq!(delivery.header("x-tenant"), Some("acme"));
    assert_eq!(delivery.header("authorization"), Some("Bearer cli-token"));
    let asked = String::from_utf8_lossy(&issuer.received()[0].body).into_owned();
    assert!(asked.contains("scope=hooks"), "{asked}");

    let shown = bed.cli(&["endpoint", "auth", "show", &a]).await;
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(shown.status.success(), "{text}");
    for wanted in ["x-gateway-key: [redacted]", &token_url, "cli-client"] {
        assert!(text.contains(wanted), "`{wanted}` in {text}");
    }
    let json = bed
        .cli_json(&["endpoint", "auth", "show", &a])
        .await
        .to_string();
    let entries = bed.audit(&a).await;
    let audited = cli_entry(&entries, "endpoint.auth").to_string();
    for shown in [&text, &json, &audited] {
        assert!(!shown.contains("s3cret"), "a secret is shown: {shown}");
    }

    let removed = bed
        .cli_json(&["endpoint", "auth", "oauth2", &a, "--remove"])
        .await;
    assert_eq!(removed["oauth2"], json!(null), "{removed}");
}

#[both_backends]
async fn a_client_certificate_set_by_the_cli_shows_its_subject_and_a_key_that_does_not_match_is_refused(
    backend: Backend,
) {
    let bed = Bed::start(backend, &["/a"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    let dir = tempfile::tempdir().expect("a temp dir");
    let ca = TestCa::new();
    let (cert, key) = ca.client_cert("cli.partner.test");
    let (_, other_key) = ca.client_cert("other.test");
    let (cert, key, other_key) = (
        write(dir.path(), "cert.pem", &cert),
        write(dir.path(), "key.pem", &key),
        write(dir.path(), "other.pem", &other_key),
    );
    let refused = bed
        .cli(&[
            "endpoint",
            "auth",
            "client-certificate",
            &a,
            "--certificate",
            &cert,
            "--private-key",
            &other_key,
        ])
        .await;
    let err = assert_refused(&refused, 2, "a key of another certificate");
    assert!(err.contains("--private-key"), "{err}");
    let shown = bed.cli_json(&["endpoint", "auth", "show", &a]).await;
    assert_eq!(
        shown["client_certificate"],
        json!(null),
        "nothing was set: {shown}"
    );

    let set = bed
        .cli_json(&[
            "endpoint",
            "auth",
            "client-certificate",
            &a,
            "--certificate",
            &cert,
            "--private-key",
            &key,
        ])
        .await;
    assert_eq!(
        set["client_certificate"]["subject"], "CN=cli.partner.test",
        "{set}"
    );
    assert!(!set.to_string().contains("PRIVATE KEY"), "{set}");
    let (status, api) = bed
        .api(
            "GET",
            &format!("/v1/endpoints/{a}/auth"),
            &bed.store.partner_key,
            None,
        )
        .await;
    assert_eq!(status, 200, "{api}");
    assert_eq!(
        api["client_certificate"]["subject"], "CN=cli.partner.test",
        "{api}"
    );
}
