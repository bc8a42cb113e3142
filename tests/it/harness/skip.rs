//! The one rule for skipping: a test that cannot run here says so loudly
//! and passes, except under `CI=true`, where every skip is a failure (CI
//! installs everything the tests need, so a skip there hides a gap).

/// Whether tests run in CI.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `true` after saying loudly that `what` is skipped because of `why`;
/// under `CI=true` it fails the test instead.
pub fn skipping(what: &str, why: &str) -> bool {
    assert!(
        !in_ci(),
        "{what} cannot run, and CI must not skip it: {why}"
    );
    eprintln!("SKIPPED: {what}: {why}");
    true
}
