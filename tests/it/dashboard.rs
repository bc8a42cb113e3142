//! The operator dashboard in a real browser (headless Chromium): signing in
//! with an operator key, the overview of actors and backlog, refusals, the
//! session cookie the page script cannot read, signing out, and revocation.

use serde_json::{Value, json};

use crate::harness::{
    Backend,
    browser::{Browser, skip_browser},
    spawn_app_with,
};
use crate::on_both_backends;

/// Reads the endpoints table as `{endpoint: {waiting, circuit, failures}}`.
const READ_TABLE: &str = r#"
Object.fromEntries([...document.querySelectorAll('#endpoints tr[data-endpoint]')].map(r => [
  r.dataset.endpoint,
  { waiting: r.querySelector('.waiting').textContent,
    circuit: r.querySelector('.circuit') ? r.querySelector('.circuit').textContent : null,
    failures: r.querySelector('.failures') ? r.querySelector('.failures').textContent : null }
]))
"#;

fn sign_in_with(key: &str) -> String {
    format!(
        "document.querySelector('#key').value = {}; document.querySelector('form').submit()",
        json!(key)
    )
}

on_both_backends!(
    an_operator_signs_in_and_sees_each_endpoints_circuit_and_backlog,
    |backend: Backend| async move {
        if skip_browser() {
            return;
        }
        let app = spawn_app_with(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1")]).await;
        let (broken, fine) = crate::observe::one_failing_one_fine(&app).await;
        let operator = app.operator_key().await;
        let partner_key = app.partner_key().await;

        let browser = Browser::launch().await;
        let mut page = browser.page().await;
        page.goto(&format!("{}/dashboard", app.base_url)).await;
        assert_eq!(
            page.path().await,
            "/dashboard/login",
            "signed out, the dashboard sends you to sign in"
        );

        page.navigate_by(&sign_in_with(&partner_key)).await;
        assert_eq!(page.path().await, "/dashboard/login");
        let alert = page
            .eval("document.querySelector('[role=alert]').textContent")
            .await;
        assert_eq!(
            alert, "That is not an active operator key.",
            "a partner key is refused"
        );

        page.navigate_by(&sign_in_with(&operator)).await;
        assert_eq!(page.path().await, "/dashboard", "an operator key signs in");
        assert_eq!(
            page.eval("document.cookie").await,
            "",
            "the session cookie is HttpOnly: the page cannot read it"
        );
        let table = page.eval(READ_TABLE).await;
        let row = |id: &str| -> &Value { &table[id] };
        assert_eq!(row(&broken)["waiting"], "1", "{table}");
        assert_eq!(row(&broken)["circuit"], "open", "{table}");
        assert_eq!(row(&broken)["failures"], "1", "{table}");
        assert_eq!(row(&fine)["waiting"], "0", "{table}");
        assert_eq!(
            page.eval("document.querySelector('#failed b').textContent")
                .await,
            "1",
            "the totals count the delivery waiting to retry"
        );

        // A script-free page: the policy forbids any script, inline or loaded.
        let scripts = page.eval("document.scripts.length").await;
        assert_eq!(scripts, 0);

        page.navigate_by("document.querySelector('header form').submit()")
            .await;
        assert_eq!(
            page.path().await,
            "/dashboard/login",
            "signing out returns to the form"
        );
        page.goto(&format!("{}/dashboard", app.base_url)).await;
        assert_eq!(
            page.path().await,
            "/dashboard/login",
            "and the session is gone"
        );

        // Revoking the key ends a session at once.
        let (key_id, key) = {
            let k = app.key(hookd::store::keys::Role::Operator, None).await;
            (k.id, k.key)
        };
        page.navigate_by(&sign_in_with(&key)).await;
        assert_eq!(page.path().await, "/dashboard");
        let (status, body, _) = app
            .request(
                "DELETE",
                &format!("/v1/admin/keys/{key_id}"),
                &operator,
                None,
            )
            .await;
        assert_eq!(status, 204, "{body}");
        page.goto(&format!("{}/dashboard", app.base_url)).await;
        assert_eq!(
            page.path().await,
            "/dashboard/login",
            "a revoked key's session ends"
        );
    }
);

/// POSTs a sign-in form with `key`, from `origin` if given: status and body.
async fn post_login(
    app: &crate::harness::TestApp,
    key: &str,
    origin: Option<&str>,
) -> (u16, String) {
    let mut req = app
        .http
        .post(format!("{}/dashboard/login", app.base_url))
        .insert_header(("content-type", "application/x-www-form-urlencoded"));
    if let Some(origin) = origin {
        req = req.insert_header(("origin", origin));
    }
    let mut res = req
        .send_body(format!("key={key}"))
        .await
        .expect("the sign-in completes");
    let body = res.body().await.expect("a body");
    (
        res.status().as_u16(),
        String::from_utf8_lossy(&body).into_owned(),
    )
}

on_both_backends!(
    a_sign_in_posted_from_another_site_is_refused_and_tries_are_limited,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_API__ANONYMOUS_RATE_LIMIT_PER_SECOND", "1"),
                ("HOOKD_API__ANONYMOUS_RATE_LIMIT_BURST", "2"),
            ],
        )
        .await;
        let operator = app.operator_key().await;
        let (status, body) = post_login(&app, &operator, Some("https://evil.example")).await;
        assert_eq!(status, 403, "{body}");
        assert!(body.contains("posted from another site"), "{body}");
        let (status, _) = post_login(&app, &operator, Some("null")).await;
        assert_eq!(status, 403, "an opaque origin is another site");

        let own = app.base_url.clone();
        let (status, body) = post_login(&app, "hkp_wrong", Some(&own)).await;
        assert_eq!(status, 401, "{body}");
        let (status, body) = post_login(&app, "hkp_wrong", None).await;
        assert_eq!(status, 401, "{body}");
        let (status, body) = post_login(&app, &operator, Some(&own)).await;
        assert_eq!(
            status, 429,
            "the third try within a second is refused: {body}"
        );
        assert!(body.contains("Too many tries"), "{body}");
    }
);
