//! An operator command on a database not yet migrated (an empty file made
//! for it) migrates it without a word at the default log level; `migrate`
//! says in one line what it did.

use crate::harness::process::run;

use super::bed::stderr;

/// The environment of a fresh SQLite database in `dir`: an empty file
/// (the operator commands create no database).
fn fresh(dir: &tempfile::TempDir) -> Vec<(String, String)> {
    std::fs::write(dir.path().join("hookd.db"), b"").expect("an empty database file");
    vec![(
        "HOOKD_DATABASE__URL".to_string(),
        format!("sqlite://{}/hookd.db", dir.path().display()),
    )]
}

#[test]
fn an_operator_command_on_a_fresh_database_prints_no_migration_chatter() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = run(&fresh(&dir), &["partner", "list"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        !err.to_lowercase().contains("migration"),
        "the default log level says nothing of migrations: {err}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "(none)");
}

#[test]
fn migrate_on_an_up_to_date_database_says_so_in_one_line() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let env = fresh(&dir);
    let first = run(&env, &["partner", "list"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let migrate = run(&env, &["migrate"]);
    assert!(migrate.status.success(), "{}", stderr(&migrate));
    let said = String::from_utf8_lossy(&migrate.stdout);
    assert!(
        said.contains("is up to date"),
        "`migrate` says in one line what it did: {said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "one line: {said}");
}
