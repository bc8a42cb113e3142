//! An endpoint's secret and test send from its page, in a real browser:
//! a rotation answers with the new secret shown once (in no URL, no later
//! page, no audit entry) and the overlap's end; the test send returns to
//! the endpoint with the test delivery and its result, linked; expiring
//! the previous secrets returns with how many stopped. Each writes one
//! audit entry via the dashboard, as the Partner API's operations act.

use hookd::{domain::clock::Clock as _, secret::Secret};
use serde_json::json;

use super::{
    assert_one_dashboard_entry, attributes, audit_entries, click, open_endpoint, submit, texts,
};
use crate::harness::{WAIT, browser::Page, signatures::verifies};

/// Rotates the secret of the endpoint page open now, with an overlap of an
/// hour; returns the secret the answer shows.
async fn rotate(page: &mut Page) -> String {
    let fill = "document.querySelector('#rotate [name=overlap_seconds]').value = '3600'";
    submit(page, "rotate", fill).await;
    let shown = texts(page, "#rotated #secret").await;
    assert_eq!(shown.len(), 1, "the new secret is shown: {shown:?}");
    shown[0].clone()
}

/// Sends a test event from the endpoint page open now; returns its delivery.
async fn send_test(page: &mut Page, ep: &str) -> String {
    submit(page, "test", "").await;
    assert_eq!(page.path().await, format!("/dashboard/endpoints/{ep}"));
    let done = texts(page, "#done").await;
    assert!(done[0].starts_with("Test event sent"), "{done:?}");
    let links = attributes(
        page,
        "#test-delivery a[href^='/dashboard/deliveries/']",
        "href",
    )
    .await;
    assert_eq!(links.len(), 1, "the test delivery is linked: {links:?}");
    links[0].rsplit('/').next().unwrap_or_default().to_string()
}

browser_test!(
    a_rotation_shows_the_new_secret_once_and_the_test_send_is_signed_with_it,
    at(|w| format!("/dashboard/endpoints/{}", w.ep_a)),
    |w, page, backend| {
        let secret = rotate(&mut page).await;
        assert!(secret.starts_with("whsec_"), "{secret}");
        assert_eq!(
            page.eval("location.search").await,
            json!(""),
            "no URL carries the secret"
        );
        let overlap = texts(&mut page, "#rotated #overlap").await;
        assert!(
            overlap[0].contains("in 1 h") || overlap[0].contains("in 59 min"),
            "the previous secret signs for the hour asked: {overlap:?}"
        );
        let signing = texts(&mut page, "#signing").await;
        assert!(
            signing[0].contains("previous, signs until"),
            "both sign during the overlap: {signing:?}"
        );
        screenshot_rotated(&mut page, backend).await;
        let entries = audit_entries(&w.app).await;
        assert_one_dashboard_entry(&entries, "endpoint.secret_rotate", &w.ep_a, &w.operator_id);
        assert_eq!(entries[0].detail["overlap_seconds"], 3600);
        assert!(
            !entries[0].detail.to_string().contains(&secret),
            "the audit entry never holds the secret: {:?}",
            entries[0].detail
        );

        open_endpoint(&mut page, &w.app, &w.ep_a).await;
        let html = page.eval("document.documentElement.outerHTML").await;
        assert!(
            !html.as_str().unwrap_or_default().contains(&secret),
            "the page read again does not show it"
        );

        let delivery = send_test(&mut page, &w.ep_a).await;
        let got =
            w.ok.wait_for(2, WAIT)
                .await
                .expect("the test event arrives");
        let test = &got[1];
        assert!(
            String::from_utf8_lossy(&test.body).contains("webhook.test"),
            "{:?}",
            String::from_utf8_lossy(&test.body)
        );
        let new = Secret::parse(&secret).expect("a secret");
        assert!(
            verifies(&new, test, w.app.clock.now_ms()),
            "the new secret signs the test event"
        );
        // Its result, once recorded, shows on the endpoint page it linked.
        let sql = format!(
            "SELECT COUNT(*) AS n FROM delivery WHERE id = '{delivery}' AND state = 'delivered'"
        );
        let delivered = || async { (w.app.count(&sql).await == 1).then_some(()) };
        crate::harness::wait_until(WAIT, delivered)
            .await
            .expect("the test delivery is recorded");
        let here = page_url(&mut page).await;
        page.goto(&here).await;
        assert_eq!(texts(&mut page, "#test-state").await, ["delivered"]);
        let result = texts(&mut page, "#test-result").await;
        assert!(result[0].starts_with("HTTP 200"), "{result:?}");
        let entries = audit_entries(&w.app).await;
        assert_eq!(entries[0].action, "endpoint.test", "{entries:?}");
        assert_eq!(entries[0].detail["delivery_id"], json!(delivery));
        click(
            &mut page,
            "#test-delivery a[href^='/dashboard/deliveries/']",
        )
        .await;
        assert_eq!(
            page.path().await,
            format!("/dashboard/deliveries/{delivery}")
        );
    }
);

/// The address of the page open now.
async fn page_url(page: &mut Page) -> String {
    page.eval("location.href")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// With `HOOKD_SCREENSHOTS=1`, the page answering a rotation.
async fn screenshot_rotated(page: &mut Page, backend: crate::harness::Backend) {
    super::screenshot(page, backend, "secret-rotated").await;
}

browser_test!(
    expiring_the_previous_secrets_says_how_many_stopped_and_writes_one_entry,
    at(|w| format!("/dashboard/endpoints/{}", w.ep_a)),
    |w, page, backend| {
        rotate(&mut page).await;
        open_endpoint(&mut page, &w.app, &w.ep_a).await;
        submit(&mut page, "expire-previous", "").await;
        assert_eq!(
            page.path().await,
            format!("/dashboard/endpoints/{}", w.ep_a)
        );
        let done = texts(&mut page, "#done").await;
        assert!(done[0].contains("1 stopped signing"), "{done:?}");
        let signing = texts(&mut page, "#signing").await;
        assert!(
            !signing[0].contains("previous"),
            "only the newest signs: {signing:?}"
        );
        let entries = audit_entries(&w.app).await;
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_one_dashboard_entry(
            &entries[..1],
            "endpoint.secret_expire_previous",
            &w.ep_a,
            &w.operator_id,
        );
        assert_eq!(entries[0].detail["expired"], 1);
    }
);
