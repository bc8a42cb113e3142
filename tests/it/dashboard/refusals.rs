//! What the dashboard refuses, over plain HTTP: a form post without its
//! session's CSRF token, with another session's, or from another site is a
//! 403 page and does nothing; unknown ids are 404 pages; a signed-out
//! browser is sent to sign in.

use super::sign_in::{Answer, answer, client, open_at, sign_in};
use crate::admin_views::{audit_count, endpoint_status};
use crate::harness::{TestApp, answer::header, read_text, send::send_with_optional_body};
use hookd_test_macros::both_backends;

/// What a dashboard request got, with its body.
pub(super) struct Got {
    pub answer: Answer,
    pub content_type: String,
    pub body: String,
}

/// `method path` with the session cookie `session` (none if empty), from
/// `origin` (none if empty), with a form body if given.
pub(super) async fn send(
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
    let sent = send_with_optional_body(req, "application/x-www-form-urlencoded", form).await;
    let res = sent.unwrap_or_else(|e| panic!("{path} completes: {e}"));
    let answer = answer(&res);
    let (_, body, headers) = read_text(res).await;
    Got {
        answer,
        content_type: header(&headers, "content-type")
            .unwrap_or_default()
            .to_string(),
        body,
    }
}

/// A session cookie of `key`, signed in from hookd's own origin.
pub(super) async fn session(app: &TestApp, key: &str) -> String {
    let own = app.base_url.clone();
    let got = sign_in(app, key, &[("origin", &own)]).await;
    got.session.expect("a session cookie")
}

/// The CSRF token in the forms of the page at `path`, as `session` sees it.
pub(super) async fn token(app: &TestApp, path: &str, session: &str) -> String {
    let page = send(app, ("GET", path), session, "", None).await;
    assert_eq!(page.answer.status, 200, "{path}: {}", page.body);
    let after = page
        .body
        .split(r#"name="csrf" value=""#)
        .nth(1)
        .unwrap_or_else(|| panic!("{path} has a form with a token: {}", page.body));
    after.split('"').next().unwrap_or_default().to_string()
}

/// The endpoint's status and how many audit entries there are.
async fn status_and_audit(app: &TestApp, ep: &str) -> (String, i64) {
    (endpoint_status(app, ep).await, audit_count(app).await)
}

/// An operator's two sessions and an endpoint: what the refusals post to.
struct Bed {
    app: TestApp,
    ep: String,
    /// hookd's own origin.
    own: String,
    /// The session that posts, and another of the same key.
    mine: String,
    other: String,
    /// `/dashboard/endpoints/{ep}/disable`.
    disable: String,
}

async fn bed(app: TestApp) -> Bed {
    let operator = app.operator_key().await;
    let (ep, _) = app.endpoint("http://127.0.0.1:9/hook").await;
    let own = app.base_url.clone();
    let (mine, other) = (
        session(&app, &operator).await,
        session(&app, &operator).await,
    );
    let disable = format!("/dashboard/endpoints/{ep}/disable");
    Bed {
        app,
        ep,
        own,
        mine,
        other,
        disable,
    }
}

impl Bed {
    /// The CSRF token of `session` on the endpoint's page.
    async fn token_of(&self, session: &str) -> String {
        let page = format!("/dashboard/endpoints/{}", self.ep);
        token(&self.app, &page, session).await
    }

    /// Posts `form` to `path` with my session, from `origin`.
    async fn post(&self, path: &str, origin: &str, form: &str) -> Got {
        send(&self.app, ("POST", path), &self.mine, origin, Some(form)).await
    }
}

#[both_backends]
async fn a_disable_without_its_sessions_own_token_or_from_another_site_is_refused_and_does_nothing(
    app: TestApp,
) {
    let b = bed(app).await;
    let (t_mine, t_other) = (b.token_of(&b.mine).await, b.token_of(&b.other).await);
    assert_ne!(t_mine, t_other, "each session has its own token");
    let own = b.own.as_str();
    let cases = [
        ("no token", own, "reason=x".to_string()),
        ("a made-up token", own, "csrf=AAAA&reason=x".into()),
        (
            "another session's token",
            own,
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
        let got = b.post(&b.disable, origin, form).await;
        assert_eq!(got.answer.status, 403, "{what}: refused: {}", got.body);
        assert!(got.content_type.starts_with("text/html"), "{what}: a page");
        assert!(
            got.body.contains("nothing was done"),
            "{what}: {}",
            got.body
        );
        assert_eq!(
            status_and_audit(&b.app, &b.ep).await,
            ("active".into(), 0),
            "{what}: nothing is done or written"
        );
    }
}

#[both_backends]
async fn every_dashboard_action_refuses_a_post_without_the_token(app: TestApp) {
    let b = bed(app).await;
    for action in ["enable", "recover", "rotate", "expire-previous", "test"] {
        let path = format!("/dashboard/endpoints/{}/{action}", b.ep);
        let got = b.post(&path, &b.own, "since=x").await;
        assert_eq!(got.answer.status, 403, "{action} without a token");
    }
    let sent = "SELECT COUNT(*) AS n FROM outbox_event WHERE type = 'webhook.test'";
    assert_eq!(b.app.count(sent).await, 0, "no test event was sent");
    let keys = "SELECT COUNT(*) AS n FROM endpoint_secret";
    assert_eq!(b.app.count(keys).await, 1, "no secret was made");
    let got = b
        .post("/dashboard/deliveries/dlv_x/replay", &b.own, "")
        .await;
    assert_eq!(got.answer.status, 403, "replay without a token");
    assert_eq!(status_and_audit(&b.app, &b.ep).await, ("active".into(), 0));
}

#[both_backends]
async fn a_signed_out_post_is_sent_to_sign_in_and_does_nothing(app: TestApp) {
    let b = bed(app).await;
    let form = format!("csrf={}&reason=x", b.token_of(&b.mine).await);
    let signed_out = send(&b.app, ("POST", &b.disable), "", &b.own, Some(&form)).await;
    assert_eq!(
        (
            signed_out.answer.status,
            signed_out.answer.location.as_deref()
        ),
        (303, Some("/dashboard/login")),
        "signed out, a post is sent to sign in"
    );
    assert_eq!(status_and_audit(&b.app, &b.ep).await, ("active".into(), 0));
}

#[both_backends]
async fn a_post_with_its_sessions_token_from_hookds_own_origin_is_taken_and_audited(app: TestApp) {
    let b = bed(app).await;
    let form = format!("csrf={}&reason=x", b.token_of(&b.mine).await);
    let taken = b.post(&b.disable, &b.own, &form).await;
    assert_eq!(
        taken.answer.status, 303,
        "with its token it is taken: {}",
        taken.body
    );
    assert_eq!(
        taken.answer.location,
        Some(format!("/dashboard/endpoints/{}?done=disabled", b.ep))
    );
    assert_eq!(
        status_and_audit(&b.app, &b.ep).await,
        ("disabled".into(), 1)
    );
}

#[both_backends]
async fn an_unknown_page_or_id_is_a_404_page(app: TestApp) {
    let b = bed(app).await;
    for path in [
        "/dashboard/endpoints/ep_nope",
        "/dashboard/deliveries/dlv_nope",
        "/dashboard/events/evt_nope",
        "/dashboard/no-such-page",
    ] {
        let got = send(&b.app, ("GET", path), &b.mine, "", None).await;
        assert_eq!(got.answer.status, 404, "{path}: {}", got.body);
        assert!(got.content_type.starts_with("text/html"), "{path}: a page");
        assert!(got.body.contains("Not found"), "{path}: {}", got.body);
    }
}

#[both_backends]
async fn an_action_on_an_unknown_id_is_a_404_and_audits_nothing(app: TestApp) {
    let b = bed(app).await;
    let form = format!("csrf={}", b.token_of(&b.mine).await);
    for path in [
        "/dashboard/deliveries/dlv_nope/replay",
        "/dashboard/endpoints/ep_nope/enable",
        "/dashboard/endpoints/ep_nope/rotate",
        "/dashboard/endpoints/ep_nope/test",
    ] {
        let got = b.post(path, &b.own, &form).await;
        assert_eq!(got.answer.status, 404, "{path}: {}", got.body);
    }
    assert_eq!(b.app.count("SELECT COUNT(*) AS n FROM audit").await, 0);
}

/// Pages a signed-out browser may ask for.
fn pages(ep: &str) -> [String; 6] {
    [
        "/dashboard".to_string(),
        "/dashboard/endpoints".into(),
        format!("/dashboard/endpoints/{ep}"),
        "/dashboard/deliveries/dlv_nope".into(),
        "/dashboard/events/evt_nope".into(),
        "/dashboard/search?event_id=evt_1".into(),
    ]
}

#[both_backends]
async fn every_page_sends_a_signed_out_request_to_sign_in(app: TestApp) {
    let b = bed(app).await;
    for path in &pages(&b.ep) {
        let got = send(&b.app, ("GET", path), "", "", None).await;
        assert_eq!(
            (got.answer.status, got.answer.location.as_deref()),
            (303, Some("/dashboard/login")),
            "{path} signed out"
        );
    }
}

browser_test!(
    a_signed_out_browser_lands_on_the_sign_in_page,
    |app: TestApp| async move {
        let b = bed(app).await;
        let (_browser, mut page) = open_at(&b.app, &pages(&b.ep)[2]).await;
        assert_eq!(
            page.path().await,
            "/dashboard/login",
            "the browser is sent to sign in"
        );
    }
);

#[both_backends]
async fn a_rotation_answers_with_the_secret_in_its_page_and_a_test_send_redirects_without_it(
    app: TestApp,
) {
    let b = bed(app).await;
    let form = format!("csrf={}&overlap_seconds=60", b.token_of(&b.mine).await);
    let path = format!("/dashboard/endpoints/{}/rotate", b.ep);
    let rotated = b.post(&path, &b.own, &form).await;
    assert_eq!(
        (rotated.answer.status, rotated.answer.location.as_deref()),
        (200, None),
        "the page itself answers, no redirect: {}",
        rotated.body
    );
    let secret = rotated
        .body
        .split(r#"<code id="secret">"#)
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| panic!("the secret is shown: {}", rotated.body));
    assert!(secret.starts_with("whsec_"), "{secret}");
    let again = send(
        &b.app,
        ("GET", &format!("/dashboard/endpoints/{}", b.ep)),
        &b.mine,
        "",
        None,
    )
    .await;
    assert!(!again.body.contains(secret), "shown once only");

    let form = format!("csrf={}", b.token_of(&b.mine).await);
    let path = format!("/dashboard/endpoints/{}/test", b.ep);
    let tested = b.post(&path, &b.own, &form).await;
    assert_eq!(tested.answer.status, 303, "{}", tested.body);
    let to = tested.answer.location.unwrap_or_default();
    let want = format!("/dashboard/endpoints/{}?done=tested&test=dlv_", b.ep);
    assert!(
        to.starts_with(&want),
        "back to the endpoint with its test delivery: {to}"
    );
    assert_eq!(audit_count(&b.app).await, 2, "one entry each");
}
