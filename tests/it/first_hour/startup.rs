//! Start-up, with the real binary: the port is bound before anything else,
//! so a taken one (held by the test) stops `serve`, `serve --dev` and
//! `demo` with one line and exit 2, before the database is touched; a
//! database that cannot be reached stops `serve`, `migrate` and an
//! operator command the same way; so does a `notify.operator_url` whose name
//! hookd's resolver finds at a forbidden address, while one that does not
//! resolve yet is only a warning.

use std::path::Path;

use crate::harness::{
    self, SLOW,
    dns::FakeDns,
    process::{Hookd, free_port},
};

/// Runs `hookd <args>` until it exits; returns its status code and stderr.
async fn run_to_exit(args: &[&str], env: &[(String, String)], dir: &Path) -> (Option<i32>, String) {
    let mut child = Hookd::start(args, env, dir, &args.join("-"));
    let status = child.exited(SLOW).await.unwrap_or_else(|| {
        panic!(
            "`hookd {}` did not stop:\n{}",
            args.join(" "),
            child.stderr()
        )
    });
    (status.code(), child.stderr())
}

/// Asserts a start-up failure: exit 2, one line naming `needle`, no panic.
fn assert_one_line(what: &str, code: Option<i32>, stderr: &str, needle: &str) {
    assert!(!stderr.contains("panicked"), "{what} panicked:\n{stderr}");
    assert_eq!(code, Some(2), "{what} exits 2:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{what} says one line:\n{stderr}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{what}: the line names the problem ({needle}):\n{stderr}"
    );
}

/// What `hookd <args>` did on a port the test holds, with a SQLite
/// database configured in a fresh folder.
struct OnATakenPort {
    what: String,
    listen: String,
    code: Option<i32>,
    stderr: String,
    database_touched: bool,
}

async fn on_a_taken_port(args: &[&str]) -> OnATakenPort {
    let work = tempfile::tempdir().expect("a working folder");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port to hold");
    let listen = taken.local_addr().expect("its address").to_string();
    let database = work.path().join("hookd.db");
    let env = vec![
        ("HOOKD_HTTP__LISTEN".to_string(), listen.clone()),
        (
            "HOOKD_DATABASE__URL".to_string(),
            format!("sqlite://{}", database.display()),
        ),
    ];
    let (code, stderr) = run_to_exit(args, &env, work.path()).await;
    drop(taken);
    OnATakenPort {
        what: format!("`hookd {}` on a taken port", args.join(" ")),
        listen,
        code,
        stderr,
        database_touched: database.exists(),
    }
}

/// Exit 2 and one line naming the address, why, and what to set.
fn assert_stopped_saying_why(got: &OnATakenPort) {
    let (what, stderr) = (&got.what, &got.stderr);
    let needle = format!("cannot listen on {}", got.listen);
    assert_one_line(what, got.code, stderr, &needle);
    assert!(
        stderr.contains("in use") && stderr.contains("HOOKD_HTTP__LISTEN"),
        "{what}: says why and what to set:\n{stderr}"
    );
}

#[hookd_test_macros::test]
async fn serve_on_a_taken_port_exits_2_with_one_line_saying_why_and_what_to_set() {
    assert_stopped_saying_why(&on_a_taken_port(&["serve"]).await);
}

#[hookd_test_macros::test]
async fn serve_dev_on_a_taken_port_exits_2_with_one_line_saying_why_and_what_to_set() {
    assert_stopped_saying_why(&on_a_taken_port(&["serve", "--dev"]).await);
}

#[hookd_test_macros::test]
async fn demo_on_a_taken_port_exits_2_with_one_line_saying_why_and_what_to_set() {
    let got = on_a_taken_port(&["demo", "--exit-when-delivered"]).await;
    assert_stopped_saying_why(&got);
}

#[hookd_test_macros::test]
async fn serve_and_demo_on_a_taken_port_stop_before_touching_the_database() {
    for args in [
        &["serve"][..],
        &["serve", "--dev"],
        &["demo", "--exit-when-delivered"],
    ] {
        let got = on_a_taken_port(args).await;
        assert_eq!(got.code, Some(2), "{}:\n{}", got.what, got.stderr);
        assert!(
            !got.database_touched,
            "{}: the database is not touched",
            got.what
        );
    }
}

/// `hookd <args>` with a PostgreSQL URL nothing listens at: status, stderr.
async fn without_its_database(args: &[&str]) -> (Option<i32>, String) {
    let work = tempfile::tempdir().expect("a working folder");
    let env = vec![
        ("HOOKD_HTTP__LISTEN".to_string(), "127.0.0.1:0".to_string()),
        (
            "HOOKD_DATABASE__URL".to_string(),
            format!("postgres://postgres@127.0.0.1:{}/none", free_port()),
        ),
        (
            "HOOKD_SECRETS__MASTER_KEY".to_string(),
            harness::MASTER_KEY.to_string(),
        ),
    ];
    run_to_exit(args, &env, work.path()).await
}

/// Exit 2 and one line saying the database cannot be reached.
async fn assert_stops_without_its_database(args: &[&str]) {
    let (code, stderr) = without_its_database(args).await;
    let what = format!("`hookd {}` without its database", args.join(" "));
    assert_one_line(&what, code, &stderr, "cannot connect to the database");
}

#[hookd_test_macros::test]
async fn serve_without_its_database_exits_2_with_one_line() {
    assert_stops_without_its_database(&["serve"]).await;
}

#[hookd_test_macros::test]
async fn migrate_without_its_database_exits_2_with_one_line() {
    assert_stops_without_its_database(&["migrate"]).await;
}

#[hookd_test_macros::test]
async fn an_operator_command_without_its_database_exits_2_with_one_line() {
    assert_stops_without_its_database(&["partner", "list"]).await;
}

/// The configuration of a `serve` on SQLite in `dir`, listening on `listen`,
/// whose names `dns` answers, with `notify.operator_url` at `https://{name}/hooks`.
fn with_operator_url(dir: &Path, dns: &FakeDns, listen: &str, name: &str) -> Vec<(String, String)> {
    let database = format!("sqlite://{}", dir.join("hookd.db").display());
    let nameservers = format!("[\"{}\"]", dns.addr());
    let url = format!("https://{name}/hooks");
    harness::test_env(
        &database,
        &[
            ("HOOKD_HTTP__LISTEN", listen),
            ("HOOKD_EGRESS__NAMESERVERS", &nameservers),
            ("HOOKD_NOTIFY__OPERATOR_URL", &url),
            (
                "HOOKD_NOTIFY__OPERATOR_SECRET",
                crate::notifications::OPERATOR_SECRET,
            ),
        ],
    )
}

#[hookd_test_macros::test]
async fn serve_refuses_an_operator_url_whose_name_resolves_to_a_forbidden_address() {
    let dns = FakeDns::start().await;
    dns.answer("ops.example", vec!["10.0.0.7".parse().expect("an address")]);
    let work = tempfile::tempdir().expect("a working folder");
    let env = with_operator_url(work.path(), &dns, "127.0.0.1:0", "ops.example");
    let (code, stderr) = run_to_exit(&["serve"], &env, work.path()).await;
    let what = "`hookd serve` with an operator URL inside";
    assert_one_line(what, code, &stderr, "notify.operator_url: ");
    assert!(
        stderr.contains("ops.example resolves to a forbidden address: 10.0.0.7 is private-use")
            && stderr.contains(r#"HOOKD_EGRESS__ALLOW_CIDRS='["127.0.0.0/8", "10.0.0.7/32"]'"#),
        "{what}: says which address and what would allow it:\n{stderr}"
    );
    assert!(dns.queries("ops.example") > 0, "hookd's resolver asked");
}

#[hookd_test_macros::test]
async fn serve_starts_with_an_operator_url_whose_name_does_not_resolve_yet_and_says_so() {
    let dns = FakeDns::start().await;
    let work = tempfile::tempdir().expect("a working folder");
    let listen = format!("127.0.0.1:{}", free_port());
    let env = with_operator_url(work.path(), &dns, &listen, "later.example");
    let mut serve = Hookd::start(&["serve"], &env, work.path(), "serve");
    let http = awc::Client::default();
    serve
        .wait_healthy(&http, &format!("http://{listen}"), SLOW)
        .await;
    let stderr = serve.stderr();
    assert!(
        stderr.contains("notify.operator_url does not resolve now"),
        "serve warns that the name does not resolve:\n{stderr}"
    );
    assert!(dns.queries("later.example") > 0, "hookd's resolver asked");
}
