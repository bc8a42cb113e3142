//! One-time portal links: an operator makes one, it opens the partner's
//! portal once and only within ten minutes; a partner key cannot make one.
//! An operator's key at the portal's sign-in is pointed to the dashboard.

use std::time::Duration;

use super::text;
use crate::harness::{browser_app::app_and_browser, read_text, rows::rows_where};
use hookd_test_macros::both_backends;

#[both_backends]
async fn a_partner_key_cannot_make_a_portal_link(app: TestApp) {
    let partner_key = app.partner_key().await;
    let path = format!("/v1/admin/partners/{}/portal-links", app.partner_id);
    assert_eq!(app.request("POST", &path, &partner_key, None).await.0, 403);
    let links = rows_where(&app, "audit", "action = 'portal_link.create'").await;
    assert_eq!(links, 0, "no link was made");
}

#[both_backends]
async fn a_one_time_link_opens_the_portal_once_and_only_within_ten_minutes(backend: Backend) {
    let Some((app, browser)) = app_and_browser(backend).await else {
        return;
    };
    let operator = app.operator_key().await;
    let path = format!("/v1/admin/partners/{}/portal-links", app.partner_id);
    let (status, link, _) = app.request("POST", &path, &operator, None).await;
    assert_eq!(status, 201, "{link}");
    let url = link["url"].as_str().expect("a link").to_string();
    assert!(
        url.starts_with(&format!("{}/portal/link/", app.base_url)),
        "{url}"
    );

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

#[both_backends]
async fn an_operator_key_at_the_portal_is_pointed_to_the_dashboard(app: TestApp) {
    let operator = app.operator_key().await;
    let res = awc::Client::builder()
        .disable_redirects()
        .finish()
        .post(format!("{}/portal/login", app.base_url))
        .insert_header(("content-type", "application/x-www-form-urlencoded"))
        .send_body(format!("key={operator}"))
        .await
        .expect("the sign-in completes");
    let opened = res.headers().get("set-cookie").is_some();
    let (status, page, _) = read_text(res).await;
    assert_eq!(status, 401, "no portal session for an operator key");
    assert!(!opened, "no cookie is set");
    assert!(
        page.contains("That is an operator key"),
        "says what the key is: {page}"
    );
    assert!(
        page.contains(r#"<a id="to-dashboard" href="/dashboard">Open the dashboard</a>"#),
        "and links where it signs in: {page}"
    );
}
