//! The partner portal in a real browser (headless Chromium) and over plain
//! HTTP: signing in with a partner key or a one-time link, seeing only the
//! partner's own objects (another partner's id is a 404 page), managing
//! endpoints and secrets, and the rules of the dashboard (cookies, CSP,
//! CSRF, the cross-site check).

use std::time::Duration;

use hookd::{domain::clock::Clock as _, secret::Secret, signing};
use serde_json::{Value, json};

use crate::harness::{
    Backend, TestApp,
    browser::{Browser, Page, docs_screenshot, skip_browser},
    receiver::Receiver,
    spawn_app, wait_until,
};
use crate::on_both_backends;

const WAIT: Duration = Duration::from_secs(10);

fn sign_in_with(key: &str) -> String {
    format!(
        "document.querySelector('#key').value = {}; document.querySelector('form').submit()",
        json!(key)
    )
}

/// Fills the fields (`#id` → value) and submits the form of `form`.
fn submit(form: &str, fields: &[(&str, &str)]) -> String {
    let mut js = String::new();
    for (id, value) in fields {
        js.push_str(&format!(
            "document.querySelector({}).value = {};",
            json!(format!("#{id}")),
            json!(value)
        ));
    }
    js.push_str(&format!("document.querySelector({}).submit()", json!(form)));
    js
}

async fn text(page: &mut Page, selector: &str) -> String {
    let js = format!(
        "(document.querySelector({}) || {{textContent: ''}}).textContent",
        json!(selector)
    );
    page.eval(&js)
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn signed_in_page(app: &TestApp, browser: &Browser, key: &str) -> Page {
    let mut page = browser.page().await;
    page.goto(&format!("{}/portal", app.base_url)).await;
    assert_eq!(
        page.path().await,
        "/portal/login",
        "signed out, the portal asks to sign in"
    );
    page.navigate_by(&sign_in_with(key)).await;
    assert_eq!(page.path().await, "/portal", "the partner key signs in");
    page
}

on_both_backends!(
    a_partner_sees_only_its_own_endpoints_and_another_partners_id_is_a_404_page,
    |backend: Backend| async move {
        if skip_browser() {
            return;
        }
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let (mine, _) = app.endpoint("http://127.0.0.1:9/mine").await;
        let (other_partner, _) = app.another_partner("Globex").await;
        let (theirs, _) = app
            .endpoint_for(&other_partner, "http://127.0.0.1:9/theirs", &[], 8)
            .await;
        let browser = Browser::launch().await;
        let mut page = signed_in_page(&app, &browser, &key).await;
        let listed = page
            .eval("[...document.querySelectorAll('#endpoints tr[data-endpoint]')].map(r => r.dataset.endpoint)")
            .await;
        assert_eq!(
            listed,
            json!([mine]),
            "only the partner's own endpoint is listed"
        );
        assert_eq!(
            page.eval("document.cookie").await,
            "",
            "the session cookie is HttpOnly"
        );

        page.goto(&format!("{}/portal/endpoints/{theirs}", app.base_url))
            .await;
        assert_eq!(
            text(&mut page, "h2").await,
            "Not found",
            "another partner's endpoint"
        );
        assert!(
            !page
                .eval("document.body.textContent")
                .await
                .to_string()
                .contains("theirs")
        );
        page.goto(&format!("{}/portal/endpoints/{mine}", app.base_url))
            .await;
        assert_eq!(
            text(&mut page, "#endpoint td").await,
            "http://127.0.0.1:9/mine"
        );
    }
);

on_both_backends!(
    a_partner_creates_an_endpoint_sends_a_test_and_rotates_its_secret_in_the_portal,
    |backend: Backend| async move {
        if skip_browser() {
            return;
        }
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let browser = Browser::launch().await;
        let mut page = signed_in_page(&app, &browser, &key).await;

        page.navigate_by(&submit(
            "form[action='/portal/endpoints']",
            &[
                ("url", &receiver.url()),
                ("event_types", "usage.*, webhook.test"),
            ],
        ))
        .await;
        let secret =
            Secret::parse(&text(&mut page, "#secret").await).expect("the new secret is shown");
        let endpoint = page.path().await;
        assert!(endpoint.starts_with("/portal/endpoints"), "{endpoint}");
        let (status, listed, _) = app.request("GET", "/v1/endpoints", &key, None).await;
        assert_eq!(status, 200);
        let id = listed["data"][0]["id"]
            .as_str()
            .expect("the endpoint exists")
            .to_string();
        assert_eq!(
            listed["data"][0]["event_types"],
            json!(["usage.*", "webhook.test"])
        );

        page.goto(&format!("{}/portal", app.base_url)).await;
        docs_screenshot(&mut page, backend, "portal-endpoints").await;
        page.goto(&format!("{}/portal/endpoints/{id}", app.base_url))
            .await;
        page.navigate_by("document.querySelector(\"form[action$='/test']\").submit()")
            .await;
        assert!(
            text(&mut page, "[role=status]")
                .await
                .starts_with("Test event evt_")
        );
        let got = receiver
            .wait_for(1, WAIT)
            .await
            .expect("the test event arrives");
        wait_until(WAIT, || async {
            let (_, d, _) = app.request("GET", "/v1/deliveries", &key, None).await;
            (d["data"][0]["state"] == "delivered").then_some(())
        })
        .await
        .expect("the test delivery is recorded");
        page.goto(&format!("{}/portal/endpoints/{id}", app.base_url))
            .await;
        docs_screenshot(&mut page, backend, "portal-endpoint").await;
        let r = &got[0];
        let verified = signing::verify(
            &secret,
            r.header("webhook-id").unwrap_or(""),
            r.header("webhook-timestamp").unwrap_or(""),
            r.header("webhook-signature").unwrap_or(""),
            &r.body,
            app.clock.now_ms(),
            i64::MAX / 2,
        );
        assert!(
            verified.is_ok(),
            "signed with the secret the portal showed: {verified:?}"
        );

        page.navigate_by("document.querySelector(\"form[action$='/rotate']\").submit()")
            .await;
        let rotated = text(&mut page, "#secret").await;
        assert!(
            rotated.starts_with("whsec_") && rotated != secret.expose(),
            "a new secret is shown once"
        );
        page.goto(&format!("{}/portal/endpoints/{id}", app.base_url))
            .await;
        assert_eq!(text(&mut page, "#secret").await, "", "and not again");
    }
);

on_both_backends!(
    a_one_time_link_opens_the_portal_once_and_only_within_ten_minutes,
    |backend: Backend| async move {
        if skip_browser() {
            return;
        }
        let app = spawn_app(backend).await;
        let operator = app.operator_key().await;
        let partner_key = app.partner_key().await;
        let path = format!("/v1/admin/partners/{}/portal-links", app.partner_id);
        assert_eq!(app.request("POST", &path, &partner_key, None).await.0, 403);
        let (status, link, _) = app.request("POST", &path, &operator, None).await;
        assert_eq!(status, 201, "{link}");
        let url = link["url"].as_str().expect("a link").to_string();
        assert!(
            url.starts_with(&format!("{}/portal/link/", app.base_url)),
            "{url}"
        );

        let browser = Browser::launch().await;
        let mut page = browser.page().await;
        page.goto(&url).await;
        assert!(
            text(&mut page, "form").await.contains("Acme"),
            "the link names whose portal opens"
        );
        page.navigate_by("document.querySelector('form').submit()")
            .await;
        assert_eq!(page.path().await, "/portal", "the link signs in");

        let mut again = browser.page().await;
        again.goto(&url).await;
        assert_eq!(
            text(&mut again, "h2").await,
            "This link does not work",
            "a link works once"
        );

        let (_, late, _) = app.request("POST", &path, &operator, None).await;
        app.advance(Duration::from_secs(601));
        again.goto(late["url"].as_str().unwrap()).await;
        assert_eq!(
            text(&mut again, "h2").await,
            "This link does not work",
            "nor after 10 minutes"
        );
        let (_, audit, _) = app
            .request(
                "GET",
                "/v1/admin/audit?action=portal_link.create",
                &operator,
                None,
            )
            .await;
        assert_eq!(audit["data"].as_array().map(Vec::len), Some(2), "{audit}");
    }
);

// ----- the rules of the dashboard, over plain HTTP -----

fn client() -> awc::Client {
    awc::Client::builder().disable_redirects().finish()
}

/// Signs in with `key`; returns the session cookie.
async fn session(app: &TestApp, key: &str) -> actix_web::cookie::Cookie<'static> {
    let res = client()
        .post(format!("{}/portal/login", app.base_url))
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .send_body(format!("key={key}"))
        .await
        .expect("the sign-in completes");
    assert_eq!(res.status().as_u16(), 303);
    let cookie = res
        .headers()
        .get_all("set-cookie")
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| actix_web::cookie::Cookie::parse(v.to_string()).ok())
        .find(|c| c.name() == "hookd_portal")
        .expect("a portal session cookie");
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.secure(), Some(true));
    assert_eq!(
        cookie.same_site(),
        Some(actix_web::cookie::SameSite::Strict)
    );
    assert_eq!(cookie.path(), Some("/portal"));
    cookie.into_owned()
}

async fn post(
    app: &TestApp,
    cookie: &actix_web::cookie::Cookie<'_>,
    path: &str,
    body: &str,
    origin: Option<&str>,
) -> u16 {
    let mut req = client()
        .post(format!("{}{path}", app.base_url))
        .insert_header(("cookie", format!("{}={}", cookie.name(), cookie.value())))
        .insert_header(("content-type", "application/x-www-form-urlencoded"));
    if let Some(o) = origin {
        req = req.insert_header(("origin", o));
    }
    req.send_body(body.to_string())
        .await
        .expect("the post completes")
        .status()
        .as_u16()
}

on_both_backends!(
    a_form_without_this_sessions_token_or_from_another_site_changes_nothing,
    |backend: Backend| async move {
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let (id, _) = app.endpoint("http://127.0.0.1:9/x").await;
        let cookie = session(&app, &key).await;
        let page = client()
            .get(format!("{}/portal/endpoints/{id}", app.base_url))
            .insert_header(("cookie", format!("{}={}", cookie.name(), cookie.value())))
            .send()
            .await
            .expect("the page loads");
        let csp = page
            .headers()
            .get("content-security-policy")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert!(
            csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
            "{csp}"
        );
        let mut page = page;
        let html = String::from_utf8_lossy(&page.body().await.expect("a page")).to_string();
        let token = html
            .split("name=\"csrf\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the page's forms carry a token")
            .to_string();
        let disable = format!("/portal/endpoints/{id}/disable");
        let status_of = || async {
            app.request("GET", &format!("/v1/endpoints/{id}"), &key, None)
                .await
                .1["status"]
                .clone()
        };

        assert_eq!(
            post(&app, &cookie, &disable, "", None).await,
            403,
            "no token"
        );
        assert_eq!(
            post(&app, &cookie, &disable, "csrf=forged", None).await,
            403,
            "a wrong token"
        );
        let other = session(&app, &key).await;
        assert_eq!(
            post(&app, &other, &disable, &format!("csrf={token}"), None).await,
            403,
            "another session's token"
        );
        assert_eq!(
            post(
                &app,
                &cookie,
                &disable,
                &format!("csrf={token}"),
                Some("https://evil.example")
            )
            .await,
            403,
            "from another site"
        );
        assert_eq!(status_of().await, Value::from("active"), "nothing was done");
        assert_eq!(
            post(&app, &cookie, &disable, &format!("csrf={token}"), None).await,
            200
        );
        assert_eq!(
            status_of().await,
            Value::from("disabled"),
            "with its own token it works"
        );
    }
);

on_both_backends!(
    a_partner_sets_its_notification_channel_in_the_portal_and_sees_the_secret_once,
    |backend: Backend| async move {
        if skip_browser() {
            return;
        }
        let app = spawn_app(backend).await;
        let key = app.partner_key().await;
        let receiver = Receiver::start().await;
        let browser = Browser::launch().await;
        let mut page = signed_in_page(&app, &browser, &key).await;
        page.goto(&format!("{}/portal/settings", app.base_url))
            .await;
        page.navigate_by(&submit(
            "form[action='/portal/settings']",
            &[
                ("notification_email", "ops@acme.example"),
                ("notification_url", &receiver.url()),
            ],
        ))
        .await;
        let secret = text(&mut page, "#secret").await;
        assert!(
            secret.starts_with("whsec_"),
            "the notification URL's secret is shown: {secret:?}"
        );
        let (_, read, _) = app.request("GET", "/v1/partner", &key, None).await;
        assert_eq!(read["notification_email"], "ops@acme.example");
        assert!(
            read["notification_url"]
                .as_str()
                .is_some_and(|u| u.starts_with(&receiver.url())),
            "{read}"
        );

        // Emptying a field removes it; the URL's secret is not shown again.
        page.navigate_by(&submit(
            "form[action='/portal/settings']",
            &[("notification_email", "")],
        ))
        .await;
        assert_eq!(text(&mut page, "#secret").await, "");
        let (_, read, _) = app.request("GET", "/v1/partner", &key, None).await;
        assert!(read["notification_email"].is_null(), "{read}");
        assert!(
            read["notification_url"].is_string(),
            "the URL stays: {read}"
        );
    }
);
