//! Signing in to the operator dashboard. In a real browser (headless
//! Chromium): the way to the form, a partner key refused, the overview of
//! circuits and backlog, a page with no script that cannot read its cookie,
//! signing out, and revocation. Over plain HTTP: the cross-site check and
//! signing out on the server. (The pages' headers and the cookie's
//! attributes are in `headers`; failed sign-ins spending the address's
//! budget in `rate_limits`.)

use serde_json::{Value, json};

use super::signed_in;
use crate::harness::{
    TestApp,
    browser::{Browser, Page},
    spawn_app_with,
};
use hookd_test_macros::both_backends;

/// Reads the endpoints table as `{endpoint: {waiting, circuit, failures}}`.
const READ_TABLE: &str = r#"
Object.fromEntries([...document.querySelectorAll('#endpoints tr[data-endpoint]')].map(r => [
  r.dataset.endpoint,
  { waiting: r.querySelector('.waiting').textContent,
    circuit: r.querySelector('.circuit') ? r.querySelector('.circuit').textContent : null,
    failures: r.querySelector('.failures') ? r.querySelector('.failures').textContent : null }
]))
"#;

pub fn sign_in_with(key: &str) -> String {
    format!(
        "document.querySelector('#key').value = {}; document.querySelector('form').submit()",
        json!(key)
    )
}

/// A browser tab open at `path` of `app`.
pub async fn open_at(app: &TestApp, path: &str) -> (Browser, Page) {
    let browser = Browser::launch().await;
    let mut page = browser.page().await;
    page.goto(&format!("{}{path}", app.base_url)).await;
    (browser, page)
}

// ----- in a browser -----

browser_test!(
    signed_out_the_dashboard_sends_the_browser_to_sign_in,
    |app: TestApp| async move {
        let (_browser, mut page) = open_at(&app, "/dashboard").await;
        assert_eq!(page.path().await, "/dashboard/login");
    }
);

browser_test!(
    a_partner_key_cannot_sign_in_to_the_dashboard,
    |app: TestApp| async move {
        let partner_key = app.partner_key().await;
        let (_browser, mut page) = open_at(&app, "/dashboard/login").await;
        page.navigate_by(&sign_in_with(&partner_key)).await;
        assert_eq!(page.path().await, "/dashboard/login", "still at the form");
        let alert = page
            .eval("document.querySelector('[role=alert]').textContent")
            .await;
        assert_eq!(alert, "That is not an active operator key.");
    }
);

browser_test!(
    an_operator_signs_in_and_sees_each_endpoints_circuit_and_backlog,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1")]).await;
        let (broken, fine) = crate::observe::one_failing_one_fine(&app).await;
        let (_browser, mut page) = signed_in(&app, &app.operator_key().await).await;
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
    }
);

browser_test!(
    the_signed_in_page_runs_no_script_and_cannot_read_its_session_cookie,
    as_operator,
    |app, page| {
        assert_eq!(page.eval("document.scripts.length").await, 0);
        assert_eq!(
            page.eval("document.cookie").await,
            "",
            "the session cookie is HttpOnly: the page cannot read it"
        );
    }
);

browser_test!(
    signing_out_in_the_browser_returns_to_the_form_and_the_session_is_gone,
    as_operator,
    |app, page| {
        page.navigate_by("document.querySelector('header form').submit()")
            .await;
        assert_eq!(page.path().await, "/dashboard/login", "back at the form");
        page.goto(&format!("{}/dashboard", app.base_url)).await;
        assert_eq!(page.path().await, "/dashboard/login", "no session is left");
    }
);

browser_test!(
    revoking_its_key_ends_a_dashboard_session_at_once,
    |app: TestApp| async move {
        let operator = app.operator_key().await;
        let revoked = app.key(hookd::store::keys::Role::Operator, None).await;
        let (_browser, mut page) = signed_in(&app, &revoked.key).await;
        let path = format!("/v1/admin/keys/{}", revoked.id);
        let (status, body, _) = app.request("DELETE", &path, &operator, None).await;
        assert_eq!(status, 204, "{body}");
        page.goto(&format!("{}/dashboard", app.base_url)).await;
        assert_eq!(page.path().await, "/dashboard/login");
    }
);

/// POSTs a sign-in form with `key`, from `origin` if given: status and body.
async fn post_login(app: &TestApp, key: &str, origin: Option<&str>) -> (u16, String) {
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

#[both_backends]
async fn a_sign_in_posted_from_another_site_is_refused(app: TestApp) {
    let operator = app.operator_key().await;
    let (status, body) = post_login(&app, &operator, Some("https://evil.example")).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("posted from another site"), "{body}");
    let (status, body) = post_login(&app, &operator, Some("null")).await;
    assert_eq!(status, 403, "an opaque origin is another site: {body}");
    assert_eq!(
        app.count("SELECT COUNT(*) AS n FROM dashboard_session")
            .await,
        0,
        "no refused sign-in may leave a session"
    );
    let (status, body) = post_login(&app, "hkp_wrong", None).await;
    assert_eq!(status, 401, "no Origin at all is not another site: {body}");
}

// ----- the cross-site check and signing out, over plain HTTP -----

/// A client that shows each redirect instead of following it.
pub fn client() -> awc::Client {
    awc::Client::builder().disable_redirects().finish()
}

/// What a dashboard request got: status, `Location` and the session cookie
/// it set (empty when cleared), if any.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub location: Option<String>,
    pub session: Option<String>,
    pub headers: awc::http::header::HeaderMap,
}

pub fn answer<S>(res: &awc::ClientResponse<S>) -> Answer {
    let session = res
        .headers()
        .get_all("set-cookie")
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| actix_web::cookie::Cookie::parse(v).ok())
        .find(|c| c.name() == "hookd_session")
        .map(|c| c.value().to_string());
    let location = res
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    Answer {
        status: res.status().as_u16(),
        location,
        session,
        headers: res.headers().clone(),
    }
}

/// POSTs a sign-in form with `key` and these extra request headers.
pub async fn sign_in(app: &crate::harness::TestApp, key: &str, headers: &[(&str, &str)]) -> Answer {
    let mut req = client()
        .post(format!("{}/dashboard/login", app.base_url))
        .insert_header(("content-type", "application/x-www-form-urlencoded"));
    for &(name, value) in headers {
        req = req.insert_header((name, value));
    }
    let res = req
        .send_body(format!("key={key}"))
        .await
        .expect("the sign-in completes");
    answer(&res)
}

/// The sign-in was taken: a 303 to the dashboard with a session cookie.
#[track_caller]
pub fn assert_signed_in(got: &Answer, what: &str) {
    assert_eq!(
        got.status, 303,
        "{what}: the sign-in should be taken: {got:?}"
    );
    assert_eq!(
        got.location.as_deref(),
        Some("/dashboard"),
        "{what}: {got:?}"
    );
    assert!(
        got.session.as_deref().is_some_and(|s| !s.is_empty()),
        "{what}: a session cookie should be set: {got:?}"
    );
}

/// The sign-in was refused as posted from another site, with no cookie.
#[track_caller]
fn assert_cross_site(got: &Answer, what: &str) {
    assert_eq!(
        got.status, 403,
        "{what}: should be refused as cross-site: {got:?}"
    );
    assert_eq!(
        got.session, None,
        "{what}: no session cookie may be set: {got:?}"
    );
}

#[both_backends]
async fn forged_forwarding_headers_and_a_wrong_scheme_do_not_pass_the_cross_site_check(
    backend: Backend,
) {
    let app = spawn_app_with(backend, &[]).await;
    let operator = app.operator_key().await;
    let port = app.running.addr.port();
    let https_self = format!("https://127.0.0.1:{port}");
    let cases: [(&str, &[(&str, &str)]); 5] = [
        (
            "an evil Origin vouched for by X-Forwarded-Host",
            &[
                ("origin", "http://evil.example"),
                ("x-forwarded-host", "evil.example"),
            ],
        ),
        (
            "an evil Origin vouched for by Forwarded",
            &[
                ("origin", "http://evil.example"),
                ("forwarded", "host=evil.example"),
            ],
        ),
        (
            "an evil https Origin with a forged proto and host",
            &[
                ("origin", "https://evil.example"),
                ("x-forwarded-proto", "https"),
                ("x-forwarded-host", "evil.example"),
            ],
        ),
        ("hookd's own host over https", &[("origin", &https_self)]),
        (
            "hookd's own host over https with a forged proto",
            &[("origin", &https_self), ("x-forwarded-proto", "https")],
        ),
    ];
    for (what, headers) in cases {
        assert_cross_site(&sign_in(&app, &operator, headers).await, what);
    }
    assert_eq!(
        app.count("SELECT COUNT(*) AS n FROM dashboard_session")
            .await,
        0,
        "no refused sign-in may leave a session"
    );
    let own = app.base_url.clone();
    assert_signed_in(
        &sign_in(&app, &operator, &[("origin", &own)]).await,
        "hookd's own origin",
    );
}

#[both_backends]
async fn behind_a_trusted_proxy_the_origin_it_reports_is_the_one_accepted(backend: Backend) {
    let trust = [("HOOKD_HTTP__TRUST_PROXY", r#"["127.0.0.0/8"]"#)];
    let app = spawn_app_with(backend, &trust).await;
    let operator = app.operator_key().await;
    let own = app.base_url.clone();
    let x_forwarded = [
        ("x-forwarded-proto", "https"),
        ("x-forwarded-host", "hooks.example.com"),
    ];
    let forwarded = [("forwarded", "proto=https;host=hooks.example.com")];
    let from = |origin: &'static str, proxy: &[(&'static str, &'static str)]| {
        [&[("origin", origin)][..], proxy].concat()
    };
    let public = "https://hooks.example.com";
    for (what, headers) in [
        ("X-Forwarded-Proto and -Host", from(public, &x_forwarded)),
        ("Forwarded", from(public, &forwarded)),
    ] {
        assert_signed_in(&sign_in(&app, &operator, &headers).await, what);
    }
    for (what, headers) in [
        (
            "plain http when the proxy says https",
            from("http://hooks.example.com", &x_forwarded),
        ),
        ("another site", from("https://evil.example", &forwarded)),
    ] {
        assert_cross_site(&sign_in(&app, &operator, &headers).await, what);
    }
    let headers = [&[("origin", own.as_str())][..], &x_forwarded].concat();
    assert_cross_site(
        &sign_in(&app, &operator, &headers).await,
        "the proxy's own address, when the proxy says the site is hooks.example.com",
    );
}

#[both_backends]
async fn with_a_public_url_only_that_origin_may_sign_in(backend: Backend) {
    let app = spawn_app_with(
        backend,
        &[("HOOKD_HTTP__PUBLIC_URL", "https://hooks.example.com")],
    )
    .await;
    let operator = app.operator_key().await;
    let own = app.base_url.clone();
    for (what, origin) in [
        ("the Host hookd was reached at", own.as_str()),
        (
            "the public host over plain http",
            "http://hooks.example.com",
        ),
        (
            "the public host on another port",
            "https://hooks.example.com:8443",
        ),
        ("another site", "https://evil.example"),
    ] {
        let forged = [("origin", origin), ("x-forwarded-host", "evil.example")];
        assert_cross_site(&sign_in(&app, &operator, &forged[..1]).await, what);
        assert_cross_site(&sign_in(&app, &operator, &forged).await, what);
    }
    assert_signed_in(
        &sign_in(&app, &operator, &[("origin", "https://hooks.example.com")]).await,
        "the public URL's origin",
    );
}

/// `method path` on the dashboard with the session cookie `session`, from
/// `origin`.
pub async fn with_session(
    app: &crate::harness::TestApp,
    method: &str,
    path: &str,
    session: &str,
    origin: &str,
) -> Answer {
    let method = awc::http::Method::from_bytes(method.as_bytes()).expect("an HTTP method");
    let res = client()
        .request(method, format!("{}{path}", app.base_url))
        .insert_header(("cookie", format!("hookd_session={session}")))
        .insert_header(("origin", origin))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{path} completes: {e}"));
    answer(&res)
}

/// The number of `dashboard_session` rows for the session a cookie names.
async fn session_rows(app: &crate::harness::TestApp, cookie: &str) -> i64 {
    let id = cookie.split('.').nth(1).expect("a v2.<session>.… token");
    app.count(&format!(
        "SELECT COUNT(*) AS n FROM dashboard_session WHERE id = '{id}'"
    ))
    .await
}

/// Asserts that the session a cookie names has `n` rows; `why` says why.
async fn assert_session_rows(app: &crate::harness::TestApp, cookie: &str, n: i64, why: &str) {
    assert_eq!(session_rows(app, cookie).await, n, "{why}");
}

#[both_backends]
async fn signing_out_ends_that_session_on_the_server_and_no_other(backend: Backend) {
    let app = spawn_app_with(backend, &[]).await;
    let operator = app.operator_key().await;
    let own = app.base_url.clone();
    let signed_in = sign_in(&app, &operator, &[("origin", &own)]).await;
    assert_signed_in(&signed_in, "the first sign-in");
    let cookie = signed_in.session.expect("a session cookie");
    let other = sign_in(&app, &operator, &[("origin", &own)]).await;
    let other = other.session.expect("a second session cookie");
    assert_session_rows(&app, &cookie, 1, "the session is a row").await;

    let page = with_session(&app, "GET", "/dashboard", &cookie, &own).await;
    assert_eq!(page.status, 200, "signed in, the dashboard shows: {page:?}");

    let forged = with_session(
        &app,
        "POST",
        "/dashboard/logout",
        &cookie,
        "https://evil.example",
    )
    .await;
    assert_eq!(
        forged.status, 403,
        "a sign-out from another site is refused: {forged:?}"
    );
    assert_session_rows(&app, &cookie, 1, "and the session lives on").await;

    let out = with_session(&app, "POST", "/dashboard/logout", &cookie, &own).await;
    assert_eq!(
        out.status, 303,
        "signing out answers with a redirect: {out:?}"
    );
    assert_eq!(out.location.as_deref(), Some("/dashboard/login"), "{out:?}");
    assert_eq!(
        out.session.as_deref(),
        Some(""),
        "the browser's cookie is cleared: {out:?}"
    );
    assert_session_rows(&app, &cookie, 0, "no row is left for the session").await;

    let replayed = with_session(&app, "GET", "/dashboard", &cookie, &own).await;
    assert_eq!(
        (replayed.status, replayed.location.as_deref()),
        (303, Some("/dashboard/login")),
        "a kept copy of the old cookie should be sent to sign in: {replayed:?}"
    );
    let still = with_session(&app, "GET", "/dashboard", &other, &own).await;
    assert_eq!(
        still.status, 200,
        "another session of the same key lives on: {still:?}"
    );
}
