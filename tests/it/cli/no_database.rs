//! The operator commands create no database: on a SQLite file that is not
//! there they stop with exit 2, naming the absolute path they looked for
//! and how to point at the right database, and leave no file behind; on a
//! PostgreSQL database that does not exist they say as much. `migrate`
//! creates the database the other commands then use.

use std::{path::Path, process::Output};

use crate::harness::{self, Backend, MASTER_KEY, process::command};

/// `hookd <args>` run in `dir` with only the defaults (`sqlite://hookd.db`).
fn in_folder(dir: &Path, args: &[&str]) -> Output {
    command(args, [("HOOKD_LOG__FILTER", "warn")])
        .current_dir(dir)
        .output()
        .expect("the hookd binary runs")
}

/// Asserts `out` stopped with exit 2 and one line naming `looked_for` and
/// the ways to point at the right database.
fn assert_named(out: &Output, looked_for: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit 2: {err}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    for wanted in [
        looked_for,
        "--config",
        "HOOKD_DATABASE__URL",
        "the folder `serve` runs in",
    ] {
        assert!(err.contains(wanted), "the refusal lacks `{wanted}`: {err}");
    }
}

#[test]
fn a_command_run_outside_the_checkout_creates_no_database_and_names_the_file_it_looked_for() {
    let dir = tempfile::tempdir().expect("a folder without a database");
    let folder = dir.path().canonicalize().expect("the folder");
    let file = folder.join("hookd.db");
    for args in [
        &["delivery", "list", "--endpoint", "ep_missing"][..],
        &["partner", "create", "--name", "Acme"],
        &["key", "create", "--operator"],
    ] {
        let out = in_folder(&folder, args);
        assert_named(&out, &file.display().to_string());
        assert!(
            !file.exists(),
            "`hookd {}` created {}",
            args.join(" "),
            file.display()
        );
    }
    assert_eq!(
        std::fs::read_dir(&folder).expect("the folder").count(),
        0,
        "nothing was left in the folder"
    );
}

#[test]
fn migrate_creates_the_database_that_the_other_commands_then_use() {
    let dir = tempfile::tempdir().expect("a folder");
    let migrated = in_folder(dir.path(), &["migrate"]);
    assert!(migrated.status.success(), "{migrated:?}");
    let listed = in_folder(dir.path(), &["partner", "list"]);
    assert!(listed.status.success(), "{listed:?}");
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "(none)");
}

#[hookd_test_macros::test]
async fn a_command_on_a_postgres_database_that_does_not_exist_names_it() {
    let (url, _) = harness::database(Backend::Postgres).await;
    let (server, _) = url.rsplit_once('/').expect("a database name");
    let missing = format!("{server}/hookd_no_such_database");
    let env = vec![
        ("HOOKD_DATABASE__URL".to_string(), missing),
        (
            "HOOKD_SECRETS__MASTER_KEY".to_string(),
            MASTER_KEY.to_string(),
        ),
    ];
    let out = harness::process::run_off_runtime(env, vec!["partner".into(), "list".into()]).await;
    assert_named(&out, "hookd_no_such_database");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not exist"),
        "PostgreSQL's reason is kept: {err}"
    );
}
