//! CI refuses skips: a test that cannot run says so and passes on a
//! developer's machine, and fails under `CI=true`. Checked by running this
//! test binary itself as a child, on one PostgreSQL variant and one browser
//! test, with the switch that skips them.

use std::process::Output;

/// The PostgreSQL variant of a quick store test.
const POSTGRES_VARIANT: &str =
    "store::a_snapshot_keeps_seeing_the_rows_of_its_first_read_while_others_commit::postgres";

/// A browser test.
const BROWSER_TEST: &str =
    "dashboard::sign_in::an_operator_signs_in_and_sees_each_endpoints_circuit_and_backlog::sqlite";

/// This test binary run on exactly `test`, with `env` on top of a clean
/// environment (PATH only, so the parent's `CI` does not leak in).
fn run_alone(test: &str, env: &[(&str, &str)]) -> Output {
    let exe = std::env::current_exe().expect("the test binary's path");
    std::process::Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .output()
        .expect("the test binary runs")
}

fn ran_one(out: &Output) -> bool {
    String::from_utf8_lossy(&out.stdout).contains("1 passed")
}

#[test]
fn a_skipped_postgres_variant_says_so_and_passes_outside_ci() {
    let out = run_alone(POSTGRES_VARIANT, &[("HOOKD_TEST_PG", "skip")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && ran_one(&out), "{stderr}");
    assert!(
        stderr.contains("SKIPPED"),
        "the skip is said out loud: {stderr}"
    );
}

/// Asserts that `test`, told to skip by `switch` (a variable and its
/// value), fails under `CI=true` and says why.
fn assert_skip_fails_under_ci(test: &str, switch: (&str, &str)) {
    let out = run_alone(test, &[switch, ("CI", "true")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "CI=true must refuse the skip: {stderr}"
    );
    assert!(stderr.contains("CI must not skip"), "{stderr}");
}

#[test]
fn a_skipped_postgres_variant_fails_under_ci() {
    assert_skip_fails_under_ci(POSTGRES_VARIANT, ("HOOKD_TEST_PG", "skip"));
}

#[test]
fn a_skipped_browser_test_fails_under_ci() {
    assert_skip_fails_under_ci(BROWSER_TEST, ("HOOKD_TEST_BROWSER", "skip"));
}
