//! A refused operator command exits with the status of its kind (docs/operating.md: 1
//! failed, 2 bad input, 3 not found), prints nothing on stdout, says why,
//! and changes nothing.

use super::{assert_exit, cli, cli_env, endpoint_create, rows, stored_partner};
use crate::harness::TestApp;
use hookd_test_macros::both_backends;

/// Runs `hookd <args>` on the database of `app`, which must fail with exit status `code` naming
/// `named` (see `assert_exit`), and checks that `table` gained no row.
async fn assert_refused_and_unmade(
    app: &TestApp,
    args: &[&str],
    (code, named): (i32, &str),
    table: &str,
) {
    let before = rows(app, table).await;
    assert_exit(&cli(&cli_env(app), args).await, code, named);
    assert_eq!(
        rows(app, table).await,
        before,
        "`hookd {}` made no {table} row",
        args.join(" ")
    );
}

#[both_backends]
async fn an_endpoint_at_a_private_address_exits_2_and_is_not_made(app: TestApp) {
    let args = endpoint_create(&app.partner_id, "http://10.0.0.1/hooks");
    assert_refused_and_unmade(&app, &args, (2, "10.0.0.1"), "endpoint").await;
}

#[both_backends]
async fn an_endpoint_for_an_unknown_partner_exits_3_and_is_not_made(app: TestApp) {
    let args = endpoint_create("ptn_nobody", "http://127.0.0.1:9/");
    let refusal = (3, "ptn_nobody does not exist");
    assert_refused_and_unmade(&app, &args, refusal, "endpoint").await;
}

#[both_backends]
async fn a_key_for_an_unknown_partner_exits_3_and_is_not_made(app: TestApp) {
    let args = ["key", "create", "--partner", "ptn_nobody"];
    let refusal = (3, "ptn_nobody does not exist");
    assert_refused_and_unmade(&app, &args, refusal, "api_key").await;
}

#[both_backends]
async fn a_key_without_a_role_or_with_two_exits_2_and_is_not_made(app: TestApp) {
    for (args, named) in [
        (&["key", "create"][..], "--service"),
        (
            &["key", "create", "--service", "--operator"][..],
            "--operator",
        ),
    ] {
        assert_refused_and_unmade(&app, args, (2, named), "api_key").await;
    }
}

#[both_backends]
async fn a_partner_id_already_taken_exits_1_and_the_first_partner_stays(app: TestApp) {
    let id = app.partner_id.clone();
    let args = ["partner", "create", "--name", "Impostor", "--id", &id];
    assert_refused_and_unmade(&app, &args, (1, "already exists"), "partner").await;
    let (status, stored) = stored_partner(&app, &id).await;
    assert_eq!(status, 200, "{stored}");
    assert_eq!(
        stored["name"], "Acme",
        "the first partner keeps its name: {stored}"
    );
}
