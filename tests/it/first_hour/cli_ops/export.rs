//! `hookd event export` (the real binary, beside a running `serve`) writes
//! byte for byte what `GET /v1/events/export` streams for the same range;
//! a `--since` that is not a time exits 2 naming the flag, an unknown
//! partner exits 3, and neither writes a line.

use super::bed::{Bed, assert_refused};
use crate::harness::{Backend, read_text};

#[hookd_test_macros::test]
async fn the_cli_export_writes_what_the_api_streams() {
    let bed = Bed::start(Backend::Sqlite, &["/a"]).await;
    let since = (chrono::Utc::now() - chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let until = (chrono::Utc::now() + chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let first = bed.publish().await;
    let second = bed.publish().await;
    bed.receives("/a", &second, 0).await;

    let partner = bed.store.partner_id.clone();
    let out = bed
        .cli(&[
            "event",
            "export",
            "--partner",
            &partner,
            "--since",
            &since,
            "--until",
            &until,
        ])
        .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = String::from_utf8(out.stdout).expect("UTF-8");

    let url = format!("{}/v1/events/export?since={since}&until={until}", bed.base);
    let sent = bed
        .http
        .get(url)
        .bearer_auth(&bed.store.partner_key)
        .send()
        .await;
    let (status, streamed, _) = read_text(sent.expect("the export request completes")).await;
    assert_eq!(status, 200, "{streamed}");
    assert_eq!(written, streamed, "the command writes what the API streams");
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 3, "two events and the end line: {written}");
    assert!(
        lines[0].contains(&first) && lines[1].contains(&second),
        "{written}"
    );
    assert!(lines[2].contains(r#""complete":true"#), "{written}");
}

#[hookd_test_macros::test]
async fn a_bad_since_or_an_unknown_partner_is_refused_without_a_line() {
    let bed = Bed::start(Backend::Sqlite, &["/a"]).await;
    let partner = bed.store.partner_id.clone();
    let bad = bed
        .cli(&[
            "event",
            "export",
            "--partner",
            &partner,
            "--since",
            "yesterday",
        ])
        .await;
    let err = assert_refused(&bad, 2, "a --since that is not a time");
    assert!(err.contains("--since"), "the flag is named: {err}");
    let since = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let unknown = bed
        .cli(&[
            "event",
            "export",
            "--partner",
            "ptn_nobody",
            "--since",
            &since,
        ])
        .await;
    let err = assert_refused(&unknown, 3, "an unknown partner");
    assert!(err.contains("ptn_nobody"), "the partner is named: {err}");
}
