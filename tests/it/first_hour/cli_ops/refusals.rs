//! What the CLI refuses: a command on something that does not exist exits
//! 3, bad input exits 2 naming what is wrong, and neither changes or
//! audits anything.

use super::bed::{Bed, assert_refused};
use crate::harness::Backend;

/// Commands on ids that do not exist.
const NOT_FOUND: [&[&str]; 11] = [
    &["endpoint", "get", "ep_nope"],
    &["endpoint", "disable", "ep_nope"],
    &["endpoint", "update", "ep_nope", "--concurrency", "2"],
    &["endpoint", "delete", "ep_nope", "--yes"],
    &["delivery", "get", "dlv_nope"],
    &["delivery", "replay", "dlv_nope"],
    &["event", "get", "evt_nope"],
    &["partner", "get", "nope"],
    &[
        "partner",
        "update",
        "nope",
        "--notification-email",
        "ops@example.com",
    ],
    &["key", "revoke", "key_nope"],
    &["key", "create", "--partner", "nope"],
];

/// Commands with bad input on the endpoint `a`, with what the error names.
fn bad_input(a: &str) -> [(Vec<&str>, &'static str); 9] {
    [
        (
            vec!["endpoint", "update", a, "--concurrency", "0"],
            "--concurrency",
        ),
        (
            vec!["endpoint", "update", a, "--url", "http://10.0.0.1/hooks"],
            "--url",
        ),
        (
            vec!["endpoint", "update", a, "--event-types", "not a type"],
            "--event-types",
        ),
        (vec!["endpoint", "update", a], "nothing to change"),
        (vec!["endpoint", "delete", a], "--yes"),
        (vec!["delivery", "list", "--state", "bogus"], "--state"),
        (vec!["delivery", "list", "--limit", "0"], "--limit"),
        (
            vec!["partner", "list", "--after", "not-a-cursor"],
            "--after",
        ),
        (
            vec!["partner", "create", "--name", "X", "--id", "no spaces"],
            "--id",
        ),
    ]
}

#[hookd_test_macros::test]
async fn a_command_on_something_that_does_not_exist_exits_3_saying_so() {
    let bed = Bed::start(Backend::Sqlite, &["/a"]).await;
    for args in NOT_FOUND {
        let err = assert_refused(&bed.cli(args).await, 3, &args.join(" "));
        assert!(err.contains("does not exist"), "{}: {err}", args.join(" "));
    }
}

#[hookd_test_macros::test]
async fn bad_input_exits_2_with_an_error_naming_what_is_wrong() {
    let bed = Bed::start(Backend::Sqlite, &["/a"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    for (args, named) in bad_input(&a) {
        let err = assert_refused(&bed.cli(&args).await, 2, &args.join(" "));
        assert!(
            err.contains(named),
            "{}: the error names {named}: {err}",
            args.join(" ")
        );
    }
}

#[hookd_test_macros::test]
async fn a_refused_command_changes_and_audits_nothing() {
    let bed = Bed::start(Backend::Sqlite, &["/a"]).await;
    let a = bed.store.endpoint_ids[0].clone();
    let bad = bad_input(&a).map(|(args, _)| args);
    for args in NOT_FOUND.iter().map(|a| a.to_vec()).chain(bad) {
        let out = bed.cli(&args).await;
        assert!(!out.status.success(), "{} is refused", args.join(" "));
    }
    // Refused, so unchanged: the endpoint is still there as it was.
    let (status, api) = bed.admin_endpoint(&a).await;
    assert_eq!(status, 200, "a refused delete deletes nothing: {api}");
    assert_eq!(api["concurrency"], 4, "{api}");
    assert!(bed.audit(&a).await.is_empty(), "nothing refused is audited");
}

#[test]
fn a_missing_argument_is_bad_input_and_exits_2() {
    let usage = crate::harness::process::run(&[], &["endpoint", "get"]);
    assert_eq!(
        usage.status.code(),
        Some(2),
        "a missing argument is bad input"
    );
}
