//! A refused operator command exits with the status of its kind (README: 1
//! failed, 2 bad input, 3 not found), prints nothing on stdout, says why,
//! and changes nothing.

use super::{assert_exit, cli, hookd_and_its_cli, rows, status_of};
use crate::harness::Backend;
use crate::on_both_backends;

on_both_backends!(
    an_endpoint_at_a_private_address_exits_2_and_is_not_made,
    |backend: Backend| async move {
        let (app, env) = hookd_and_its_cli(backend).await;
        let before = rows(&app, "endpoint").await;
        let out = cli(
            &env,
            &[
                "endpoint",
                "create",
                "--partner",
                &app.partner_id,
                "--url",
                "http://10.0.0.1/hooks",
            ],
        )
        .await;
        assert_exit(&out, 2, "10.0.0.1");
        assert_eq!(rows(&app, "endpoint").await, before, "no endpoint was made");
    }
);

on_both_backends!(
    an_endpoint_for_an_unknown_partner_exits_3_and_is_not_made,
    |backend: Backend| async move {
        let (app, env) = hookd_and_its_cli(backend).await;
        let before = rows(&app, "endpoint").await;
        let out = cli(
            &env,
            &[
                "endpoint",
                "create",
                "--partner",
                "ptn_nobody",
                "--url",
                "http://127.0.0.1:9/",
            ],
        )
        .await;
        assert_exit(&out, 3, "ptn_nobody does not exist");
        assert_eq!(rows(&app, "endpoint").await, before, "no endpoint was made");
    }
);

on_both_backends!(
    a_key_for_an_unknown_partner_exits_3_and_is_not_made,
    |backend: Backend| async move {
        let (app, env) = hookd_and_its_cli(backend).await;
        let before = rows(&app, "api_key").await;
        let out = cli(&env, &["key", "create", "--partner", "ptn_nobody"]).await;
        assert_exit(&out, 3, "ptn_nobody does not exist");
        assert_eq!(rows(&app, "api_key").await, before, "no key was made");
    }
);

on_both_backends!(
    a_key_without_a_role_or_with_two_exits_2_and_is_not_made,
    |backend: Backend| async move {
        let (app, env) = hookd_and_its_cli(backend).await;
        let before = rows(&app, "api_key").await;
        assert_exit(&cli(&env, &["key", "create"]).await, 2, "--service");
        assert_exit(
            &cli(&env, &["key", "create", "--service", "--operator"]).await,
            2,
            "--operator",
        );
        assert_eq!(rows(&app, "api_key").await, before, "no key was made");
    }
);

on_both_backends!(
    a_partner_id_already_taken_exits_1_and_the_first_partner_stays,
    |backend: Backend| async move {
        let (app, env) = hookd_and_its_cli(backend).await;
        let id = app.partner_id.clone();
        let before = rows(&app, "partner").await;
        let out = cli(
            &env,
            &["partner", "create", "--name", "Impostor", "--id", &id],
        )
        .await;
        assert_exit(&out, 1, "already exists");
        assert_eq!(rows(&app, "partner").await, before, "no partner was made");
        let operator = app.operator_key().await;
        let (status, stored) = status_of(
            &app,
            "GET",
            &format!("/v1/admin/partners/{id}"),
            &operator,
            None,
        )
        .await;
        assert_eq!(status, 200, "{stored}");
        assert_eq!(
            stored["name"], "Acme",
            "the first partner keeps its name: {stored}"
        );
    }
);
