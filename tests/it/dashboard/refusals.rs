//! What the dashboard refuses, over plain HTTP: a form post without its
//! session's CSRF token, with another session's, or from another site is a
//! 403 page and does nothing; unknown ids are 404 pages; a signed-out
//! browser is sent to sign in.

use super::sign_in::{Answer, answer, client, sign_in};
use crate::harness::{
    Backend, TestApp,
    browser::{Browser, skip_browser},
    spawn_app_with,
};
use crate::on_both_backends;

/// What a dashboard request got, with its body.
struct Got {
    answer: Answer,
    content_type: String,
    body: String,
}

/// `method path` with the session cookie `session` (none if empty), from
/// `origin` (none if empty), with a form body if given.
async fn send(
    app: &TestApp,
    (method, path): (&str, &str),
    session: &str,
    origin: &str,
    form: Option<&str>,
) -> Got {
    let method = awc::http::Method::from_bytes(method.as_bytes()).expect("a method");
    let mut req = client().request(method, format!("{}{path}", app.base_url));
    if !session.is_empty() {
        req = req.insert_header(("cookie", format!("hookd_session={session}")));
    }
    if !origin.is_empty() {
        req = req.insert_header(("origin", origin));
    }
    let sent = match form {
        Some(body) => {
            req.insert_header(("content-type", "application/x-www-form-urlencoded"))
                .send_body(body.to_string())
                .await
        }
        None => req.send().await,
    };
    let mut res = sent.unwrap_or_else(|e| panic!("{path} completes: {e}"));
    let bytes = res.body().await.expect("a body");
    Got {
        answer: answer(&res),
        content_type: res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// A session cookie of `key`, signed in from hookd's own origin.
async fn session(app: &TestApp, key: &str) -> String {
    let own = app.base_url.clone();
    let got = sign_in(app, key, &[("origin", &own)]).await;
    got.session.expect("a session cookie")
}

/// The CSRF token in the forms of the page at `path`, as `session` sees it.
async fn token(app: &TestApp, path: &str, session: &str) -> String {
    let page = send(app, ("GET", path), session, "", None).await;
    assert_eq!(page.answer.status, 200, "{path}: {}", page.body);
    let after = page
        .body
        .split(r#"name="csrf" value=""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{path} has a form with a token: {}", page.body));
    after.split('"').next().unwrap_or_default().to_string()
}

async fn status_and_audit(app: &TestApp, ep: &str) -> (String, i64) {
    let e = hookd::store::admin::endpoint(app.db(), ep)
        .await
        .expect("the endpoint reads")
        .expect("the endpoint");
    let audit = app.count("SELECT COUNT(*) AS n FROM audit").await;
    (e.status.as_str().to_string(), audit)
}

on_both_backends!(
    a_post_without_its_sessions_token_or_from_another_site_is_refused_and_does_nothing,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[]).await;
        let operator = app.operator_key().await;
        let (ep, _) = app.endpoint("http://127.0.0.1:9/hook").await;
        let own = app.base_url.clone();
        let (mine, other) = (
            session(&app, &operator).await,
            session(&app, &operator).await,
        );
        let page = format!("/dashboard/endpoints/{ep}");
        let (t_mine, t_other) = (
            token(&app, &page, &mine).await,
            token(&app, &page, &other).await,
        );
        assert_ne!(t_mine, t_other, "each session has its own token");

        let disable = format!("/dashboard/endpoints/{ep}/disable");
        let cases = [
            ("no token", own.as_str(), "reason=x".to_string()),
            ("a made-up token", &own, "csrf=AAAA&reason=x".into()),
            (
                "another session's token",
                &own,
                format!("csrf={t_other}&reason=x"),
            ),
            (
                "another site",
                "https://evil.example",
                format!("csrf={t_mine}&reason=x"),
            ),
            (
                "an opaque origin",
                "null",
                format!("csrf={t_mine}&reason=x"),
            ),
        ];
        for (what, origin, form) in &cases {
            let got = send(&app, ("POST", &disable), &mine, origin, Some(form)).await;
            assert_eq!(got.answer.status, 403, "{what}: refused: {}", got.body);
            assert!(got.content_type.starts_with("text/html"), "{what}: a page");
            assert!(
                got.body.contains("nothing was done"),
                "{what}: {}",
                got.body
            );
            assert_eq!(
                status_and_audit(&app, &ep).await,
                ("active".into(), 0),
                "{what}: nothing is done or written"
            );
        }
        // Every action checks the token, not only disable.
        for action in ["enable", "recover"] {
            let path = format!("/dashboard/endpoints/{ep}/{action}");
            let got = send(&app, ("POST", &path), &mine, &own, Some("since=x")).await;
            assert_eq!(got.answer.status, 403, "{action} without a token");
        }
        let replay = "/dashboard/deliveries/dlv_x/replay";
        let got = send(&app, ("POST", replay), &mine, &own, Some("")).await;
        assert_eq!(got.answer.status, 403, "replay without a token");

        let signed_out = send(&app, ("POST", &disable), "", &own, Some(&cases[3].2)).await;
        assert_eq!(
            (
                signed_out.answer.status,
                signed_out.answer.location.as_deref()
            ),
            (303, Some("/dashboard/login")),
            "signed out, a post is sent to sign in"
        );
        assert_eq!(status_and_audit(&app, &ep).await, ("active".into(), 0));

        let form = format!("csrf={t_mine}&reason=x");
        let taken = send(&app, ("POST", &disable), &mine, &own, Some(&form)).await;
        assert_eq!(
            taken.answer.status, 303,
            "with its token it is taken: {}",
            taken.body
        );
        assert_eq!(
            taken.answer.location,
            Some(format!("/dashboard/endpoints/{ep}?done=disabled"))
        );
        assert_eq!(status_and_audit(&app, &ep).await, ("disabled".into(), 1));
    }
);

on_both_backends!(
    unknown_ids_are_404_pages_and_signed_out_browsers_are_sent_to_sign_in,
    |backend: Backend| async move {
        let app = spawn_app_with(backend, &[]).await;
        let operator = app.operator_key().await;
        let own = app.base_url.clone();
        let mine = session(&app, &operator).await;
        for path in [
            "/dashboard/endpoints/ep_nope",
            "/dashboard/deliveries/dlv_nope",
            "/dashboard/no-such-page",
        ] {
            let got = send(&app, ("GET", path), &mine, "", None).await;
            assert_eq!(got.answer.status, 404, "{path}: {}", got.body);
            assert!(got.content_type.starts_with("text/html"), "{path}: a page");
            assert!(got.body.contains("Not found"), "{path}: {}", got.body);
        }
        let (ep, _) = app.endpoint("http://127.0.0.1:9/hook").await;
        let t = token(&app, &format!("/dashboard/endpoints/{ep}"), &mine).await;
        let form = format!("csrf={t}");
        for path in [
            "/dashboard/deliveries/dlv_nope/replay",
            "/dashboard/endpoints/ep_nope/enable",
        ] {
            let got = send(&app, ("POST", path), &mine, &own, Some(&form)).await;
            assert_eq!(got.answer.status, 404, "{path}: {}", got.body);
        }
        assert_eq!(app.count("SELECT COUNT(*) AS n FROM audit").await, 0);

        let pages = [
            "/dashboard".to_string(),
            "/dashboard/endpoints".into(),
            format!("/dashboard/endpoints/{ep}"),
            "/dashboard/deliveries/dlv_nope".into(),
            "/dashboard/search?event_id=evt_1".into(),
        ];
        for path in &pages {
            let got = send(&app, ("GET", path), "", "", None).await;
            assert_eq!(
                (got.answer.status, got.answer.location.as_deref()),
                (303, Some("/dashboard/login")),
                "{path} signed out"
            );
        }
        if skip_browser() {
            return;
        }
        let browser = Browser::launch().await;
        let mut page = browser.page().await;
        page.goto(&format!("{}{}", app.base_url, pages[2])).await;
        assert_eq!(
            page.path().await,
            "/dashboard/login",
            "the browser is sent to sign in"
        );
    }
);
