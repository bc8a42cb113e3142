//! The egress page (`docs/egress.md`), run as pasted: every `sh` block in it runs in
//! a fresh folder under `sh -e`, with the `hookd` under test first on PATH
//! (`hookd serve` held in the background, as a second terminal would, and
//! checked to answer). Dropping the port from the self-hosted example, the
//! page's old mistake, fails. And what `serve` says at start of the
//! endpoints its egress settings refuse, read from its stderr: one line per
//! endpoint with the settings that would allow it, and those settings, set
//! as printed, allow it.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use serde_json::Value;

use crate::harness::{
    self, Backend, SLOW,
    dns::FakeDns,
    process::{Hookd, free_port, healthy, prepare_endpoints, run},
};

/// The egress page, `docs/egress.md`.
fn egress_section() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/egress.md"))
        .expect("docs/egress.md is readable")
}

/// The shell blocks of a markdown text.
fn shell_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh" | "```bash" | "```shell") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), text) => {
                block.push_str(text);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// A folder with `bin/hookd`: the binary under test, except that `hookd
/// serve` goes to the background and the wrapper returns once it serves.
fn pasting_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a folder to paste in");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("bin/");
    let wrapper = format!(
        r#"#!/bin/sh
# `hookd serve` as a second terminal holds it: in the background, once it serves.
if [ "${{1:-}}" = serve ]; then
  '{real}' "$@" >>serve.out 2>>serve.err &
  pid=$!
  echo "$pid" >>serve.pids
  n=0
  until grep -q 'hookd is serving' serve.err 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || {{ echo 'hookd serve stopped:' >&2; cat serve.err >&2; exit 1; }}
    n=$((n + 1))
    [ "$n" -lt 600 ] || {{ echo 'hookd serve did not start within 60 s' >&2; exit 1; }}
    sleep 0.1
  done
  exit 0
fi
exec '{real}' "$@"
"#,
        real = env!("CARGO_BIN_EXE_hookd")
    );
    let path = bin.join("hookd");
    std::fs::write(&path, wrapper).expect("the wrapper is written");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("the wrapper is executable");
    dir
}

/// What pasting `block` in a fresh shell did.
struct Pasted {
    out: Output,
    dir: tempfile::TempDir,
    port: u16,
}

impl Pasted {
    fn said(&self) -> String {
        format!(
            "stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&self.out.stdout),
            String::from_utf8_lossy(&self.out.stderr)
        )
    }

    fn serve_pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.path().join("serve.pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    fn serve_stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("serve.err")).unwrap_or_default()
    }
}

impl Drop for Pasted {
    /// Stops the `hookd serve` the block started, by its id.
    fn drop(&mut self) {
        for pid in self.serve_pids() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// Runs `block` as pasted into `sh` in a fresh folder: only PATH (with the
/// wrapper first), HOME and a free port for `hookd serve` are set.
fn paste(block: &str) -> Pasted {
    let dir = pasting_folder();
    let port = free_port();
    let path: PathBuf = dir.path().join("bin");
    let out = Command::new("sh")
        .arg("-e")
        .arg("-c")
        .arg(block)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", path.display()))
        .env("HOME", dir.path())
        .env("HOOKD_HTTP__LISTEN", format!("127.0.0.1:{port}"))
        .current_dir(dir.path())
        .output()
        .expect("sh runs");
    Pasted { out, dir, port }
}

#[hookd_test_macros::test]
async fn every_shell_example_in_the_egress_page_works_when_pasted() {
    let blocks = shell_blocks(&egress_section());
    assert!(
        !blocks.is_empty(),
        "the egress page shows how to allow receivers"
    );
    let http = awc::Client::default();
    for block in blocks {
        let pasted = paste(&block);
        assert!(
            pasted.out.status.success(),
            "this docs/egress.md example fails when pasted:\n{block}\n{}",
            pasted.said()
        );
        if !pasted.serve_pids().is_empty() {
            let base = format!("http://127.0.0.1:{}", pasted.port);
            assert!(
                healthy(&http, &base).await,
                "the `hookd serve` of this example answers:\n{block}\n{}",
                pasted.serve_stderr()
            );
            let stderr = pasted.serve_stderr();
            assert!(
                !stderr.contains("the egress settings refuse"),
                "serve finds no endpoint the example's settings refuse:\n{stderr}"
            );
        }
    }
}

#[hookd_test_macros::test]
async fn the_self_hosted_example_without_its_ports_is_refused() {
    let block = shell_blocks(&egress_section())
        .into_iter()
        .find(|b| b.contains("HOOKD_EGRESS__ALLOWED_PORTS"))
        .expect("the self-hosted example sets the ports");
    let without_ports: String = block
        .lines()
        .filter(|l| !l.contains("HOOKD_EGRESS__ALLOWED_PORTS"))
        .map(|l| format!("{l}\n"))
        .collect();
    let pasted = paste(&without_ports);
    assert!(
        !pasted.out.status.success(),
        "without its ports, the example must fail: this test must be able to fail\n{}",
        pasted.said()
    );
    assert!(
        String::from_utf8_lossy(&pasted.out.stderr).contains("port 80 is not allowed"),
        "the refusal names the port:\n{}",
        pasted.said()
    );
}

/// The egress audit's lines in `serve`'s JSON stderr.
fn audit_lines(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["target"] == "hookd::delivery::egress_audit")
        .map(|v| v["fields"].clone())
        .collect()
}

/// Starts `serve` and waits for the audit's summary; its lines, and the
/// whole stderr.
async fn audited(env: &[(String, String)], dir: &Path, name: &str) -> (Vec<Value>, String) {
    let serve = Hookd::start(&["serve"], env, dir, name);
    let summary = harness::wait_until(SLOW, || async {
        let lines = audit_lines(&serve.stderr());
        lines
            .iter()
            .any(|l| l["refused"].is_number())
            .then_some(lines)
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "no egress audit summary within {SLOW:?}:\n{}",
            serve.stderr()
        )
    });
    (summary, serve.stderr())
}

/// The `NAME=value` assignments inside a remedy's "(`…`)", unquoted as a
/// shell would.
fn assignments(remedy: &str) -> Vec<(String, String)> {
    let inner = remedy
        .split_once("(`")
        .and_then(|(_, rest)| rest.split_once("`)"))
        .map(|(inner, _)| inner)
        .unwrap_or_else(|| panic!("a remedy with variables: {remedy}"));
    let mut found = Vec::new();
    let mut rest = inner.trim();
    while let Some((name, value)) = rest.split_once('=') {
        let (value, next) = match value.strip_prefix('\'') {
            Some(quoted) => quoted.split_once('\'').expect("a closing quote"),
            None => value.split_once(' ').unwrap_or((value, "")),
        };
        found.push((name.trim().to_string(), value.to_string()));
        rest = next.trim();
    }
    found
}

/// `serve` with egress as shipped (https on 443 and 8443, no private
/// ranges) over four endpoints: a loopback http one with a secret in its
/// query, one whose host resolves to two private addresses, the metadata
/// address, and a public https one. What its egress audit said.
struct StrictAudit {
    ids: Vec<String>,
    urls: [&'static str; 4],
    partner_id: String,
    lines: Vec<Value>,
    stderr: String,
    env: Vec<(String, String)>,
    dir: tempfile::TempDir,
    _dns: FakeDns,
}

impl StrictAudit {
    async fn run() -> StrictAudit {
        let dns = FakeDns::start().await;
        dns.answer(
            "billing.internal",
            vec!["10.0.0.7".parse().unwrap(), "10.0.0.8".parse().unwrap()],
        );
        let (url, dir) = harness::database(Backend::Sqlite).await;
        let dir = dir.expect("a SQLite folder");
        let urls = [
            "http://127.0.0.1:9000/hooks?token=hush-hush",
            "https://billing.internal/hooks",
            "https://[::ffff:169.254.169.254]/latest",
            "https://8.8.8.8/hooks",
        ];
        let prepared = prepare_endpoints(&url, &urls.map(String::from), 1).await;
        let nameservers = format!("[\"{}\"]", dns.addr());
        let strict = [
            ("HOOKD_EGRESS__ALLOW_HTTP", "false"),
            ("HOOKD_EGRESS__ALLOW_CIDRS", "[]"),
            ("HOOKD_EGRESS__ALLOWED_PORTS", "[443, 8443]"),
            ("HOOKD_EGRESS__NAMESERVERS", nameservers.as_str()),
            ("HOOKD_LOG__FORMAT", "json"),
        ];
        let env = harness::test_env(&url, &strict);
        let (lines, stderr) = audited(&env, dir.path(), "strict").await;
        StrictAudit {
            ids: prepared.endpoint_ids,
            urls,
            partner_id: prepared.partner_id,
            lines,
            stderr,
            env,
            dir,
            _dns: dns,
        }
    }

    /// The lines about endpoint number `i`.
    fn about(&self, i: usize) -> Vec<&Value> {
        let id = &self.ids[i];
        self.lines.iter().filter(|l| l["endpoint"] == *id).collect()
    }

    /// The summary line.
    fn summary(&self) -> &Value {
        let summary = self.lines.iter().find(|l| l["refused"].is_number());
        summary.expect("a summary line")
    }
}

#[hookd_test_macros::test]
async fn serve_names_each_endpoint_its_egress_settings_refuse_once_and_no_other() {
    let audit = StrictAudit::run().await;
    for (i, url) in audit.urls.iter().enumerate().take(3) {
        let stderr = &audit.stderr;
        assert_eq!(audit.about(i).len(), 1, "one line for {url}:\n{stderr}");
    }
    assert!(audit.about(3).is_empty(), "a public https URL is not named");
}

#[hookd_test_macros::test]
async fn each_refused_endpoint_is_named_with_why_and_the_settings_that_would_allow_it() {
    let audit = StrictAudit::run().await;
    let local = audit.about(0)[0];
    assert_eq!(local["partner"], audit.partner_id.as_str());
    assert_eq!(local["host"], "127.0.0.1:9000");
    assert_eq!(
        local["reason"],
        "the URL must use https (plain http is not allowed here), got `http`"
    );
    let remedy = local["remedy"].as_str().unwrap_or_default();
    for needed in [
        "HOOKD_EGRESS__ALLOW_HTTP=true",
        "HOOKD_EGRESS__ALLOWED_PORTS='[443, 8443, 9000]'",
        r#"HOOKD_EGRESS__ALLOW_CIDRS='["127.0.0.1/32"]'"#,
    ] {
        assert!(remedy.contains(needed), "{needed} in {remedy}");
    }
    let billing = audit.about(1)[0];
    assert_eq!(
        billing["reason"],
        "the URL's host billing.internal resolves to a forbidden address: 10.0.0.7 is \
         private-use (10.0.0.0/8) (and 1 more forbidden address)"
    );
    assert!(
        billing["remedy"]
            .as_str()
            .unwrap_or_default()
            .contains(r#"HOOKD_EGRESS__ALLOW_CIDRS='["10.0.0.7/32", "10.0.0.8/32"]'"#),
        "{billing}"
    );
    assert_eq!(audit.about(2)[0]["remedy"], "no egress setting allows it");
}

#[hookd_test_macros::test]
async fn the_egress_audit_sums_up_what_is_refused_and_what_no_setting_allows() {
    let audit = StrictAudit::run().await;
    let summary = audit.summary();
    assert_eq!(summary["refused"], 3, "{summary}");
    assert_eq!(summary["endpoints"], 4, "{summary}");
    assert_eq!(summary["beyond_any_setting"], 1, "{summary}");
}

#[hookd_test_macros::test]
async fn the_egress_audit_shows_no_url_query() {
    let audit = StrictAudit::run().await;
    assert!(
        !audit.stderr.contains("hush-hush"),
        "no URL query in the log"
    );
}

#[hookd_test_macros::test]
async fn the_settings_the_summary_prints_allow_every_refused_endpoint_but_the_metadata_one() {
    let audit = StrictAudit::run().await;
    let mut widened = audit.env.clone();
    widened.extend(assignments(
        audit.summary()["remedy"].as_str().unwrap_or_default(),
    ));
    let (lines, stderr) = audited(&widened, audit.dir.path(), "widened").await;
    let named: Vec<&Value> = lines.iter().filter(|l| l["endpoint"].is_string()).collect();
    assert_eq!(named.len(), 1, "only the metadata endpoint:\n{stderr}");
    assert_eq!(named[0]["endpoint"], audit.ids[2].as_str());
}

/// A fresh SQLite database with the partner `acme`, for the CLI, with
/// egress as shipped.
fn with_acme(dir: &tempfile::TempDir) -> Vec<(String, String)> {
    let env = vec![
        (
            "HOOKD_DATABASE__URL".to_string(),
            format!("sqlite://{}/hookd.db", dir.path().display()),
        ),
        (
            "HOOKD_SECRETS__MASTER_KEY".to_string(),
            harness::MASTER_KEY.to_string(),
        ),
    ];
    let migrated = run(&env, &["migrate"]);
    assert!(migrated.status.success(), "{migrated:?}");
    let created = run(
        &env,
        &["partner", "create", "--name", "Acme", "--id", "acme"],
    );
    assert!(created.status.success(), "{created:?}");
    env
}

/// Creating an endpoint of `acme` at a loopback http URL on port 9000.
const CREATE: [&str; 6] = [
    "endpoint",
    "create",
    "--partner",
    "acme",
    "--url",
    "http://127.0.0.1:9000/hooks",
];

/// What the CLI says when it refuses `CREATE`, after checking it exits 2.
fn refusal(env: &[(String, String)]) -> String {
    let refused = run(env, &CREATE);
    let stderr = String::from_utf8_lossy(&refused.stderr).to_string();
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    stderr
}

#[test]
fn a_url_refused_on_the_command_line_names_every_setting_it_needs_at_once() {
    let dir = tempfile::tempdir().expect("a folder");
    let stderr = refusal(&with_acme(&dir));
    assert!(
        stderr.contains("must use https")
            && stderr.contains(
                "HOOKD_EGRESS__ALLOW_HTTP=true HOOKD_EGRESS__ALLOWED_PORTS='[443, 8443, 9000]' \
                 HOOKD_EGRESS__ALLOW_CIDRS='[\"127.0.0.1/32\"]'"
            ),
        "the refusal names all three settings at once:\n{stderr}"
    );
}

#[test]
fn the_settings_a_command_line_refusal_names_allow_the_url() {
    let dir = tempfile::tempdir().expect("a folder");
    let env = with_acme(&dir);
    let mut widened = env.clone();
    widened.extend(assignments(&refusal(&env)));
    let accepted = run(&widened, &CREATE);
    assert!(
        accepted.status.success(),
        "the settings it named allow the URL:\n{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
}
