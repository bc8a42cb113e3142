//! A database that is not there at start: `serve` and `migrate` stop with
//! the start-up exit status (2) and say which database they cannot reach,
//! instead of hanging or starting without it.

use std::process::ExitStatus;

use crate::harness::{
    self, MASTER_KEY, SLOW,
    process::{Hookd, free_port},
};

/// Runs `hookd <args>` with `url` as its database until it exits: its exit
/// status and stderr.
fn run_against(url: &str, args: &[&str]) -> (ExitStatus, String) {
    let work = tempfile::tempdir().expect("a working folder for hookd");
    let env: Vec<(String, String)> = [
        ("HOOKD_DATABASE__URL", url),
        ("HOOKD_SECRETS__MASTER_KEY", MASTER_KEY),
        ("HOOKD_HTTP__LISTEN", "127.0.0.1:0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut hookd = Hookd::start(args, &env, work.path(), "hookd");
    let status = hookd.wait_exit(SLOW).unwrap_or_else(|| {
        panic!(
            "`hookd {}` with an unreachable database was still running after {SLOW:?}; stderr:\n{}",
            args.join(" "),
            hookd.stderr()
        )
    });
    (status, hookd.stderr())
}

/// The start-up exit status (docs/operating.md: 2 bad input, configuration or start-up).
const STARTUP_FAILED: Option<i32> = Some(2);

#[test]
fn serve_and_migrate_without_their_postgres_database_exit_2_and_say_so() {
    if harness::skip_postgres() {
        return;
    }
    let url = format!("postgres://postgres@127.0.0.1:{}/nope", free_port());
    let runs = ["serve", "migrate"].map(|command| {
        let url = url.clone();
        std::thread::spawn(move || (command, run_against(&url, &[command])))
    });
    for run in runs {
        let (command, (status, stderr)) = run.join().expect("the run does not panic");
        assert_eq!(
            status.code(),
            STARTUP_FAILED,
            "`hookd {command}` without its database; stderr:\n{stderr}"
        );
        assert!(
            stderr.contains("cannot connect to the database"),
            "`hookd {command}` should say it cannot connect to the database; stderr:\n{stderr}"
        );
    }
}

#[test]
fn serve_and_migrate_with_an_sqlite_file_they_cannot_create_exit_2_and_name_it() {
    let url = "sqlite:///nonexistent-dir/x/hookd.db";
    for command in ["serve", "migrate"] {
        let (status, stderr) = run_against(url, &[command]);
        assert_eq!(
            status.code(),
            STARTUP_FAILED,
            "`hookd {command}` with an SQLite file it cannot create; stderr:\n{stderr}"
        );
        assert!(
            stderr.contains("database") && stderr.contains("/nonexistent-dir/x/hookd.db"),
            "`hookd {command}` should name the database it cannot open; stderr:\n{stderr}"
        );
    }
}
