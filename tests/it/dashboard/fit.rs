//! Every dashboard page fits a 1366×768 laptop screen, in a real browser:
//! with long URLs, long ids and long error texts in the data, no page
//! scrolls sideways, as a whole or in any part (tables wrap, ids break
//! anywhere, long texts wrap or are cut with the whole text on hover).

use hookd::{domain::clock::Clock as _, store};
use serde_json::{Value, json};

use super::{open, screenshot, signed_in, submit};
use crate::harness::{
    TestApp, WAIT,
    browser::Page,
    receiver::{Receiver, Reply},
    spawn_app_with,
};

/// Sets the tab to a 1366×768 screen at one device pixel per CSS pixel.
pub async fn at_laptop_size(page: &mut Page) {
    let metrics = json!({"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": false});
    page.call("Emulation.setDeviceMetricsOverride", metrics)
        .await;
}

/// What scrolls sideways on the page open now: the document (wider than
/// the window) or any element that scrolls within it.
pub async fn sideways(page: &mut Page) -> Vec<String> {
    let js = r#"(() => {
        const out = [];
        const d = document.documentElement;
        if (d.scrollWidth > innerWidth) out.push(`the page: ${d.scrollWidth} px wide in ${innerWidth}`);
        for (const e of document.querySelectorAll('body *')) {
            const x = getComputedStyle(e).overflowX;
            if ((x === 'auto' || x === 'scroll') && e.scrollWidth > e.clientWidth) {
                out.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className}: ${e.scrollWidth} px in ${e.clientWidth}`);
            }
        }
        return out;
    })()"#;
    let got: Value = page.eval(js).await;
    serde_json::from_value(got).expect("a list")
}

/// Opens `path` at laptop size and checks that nothing scrolls sideways.
async fn fits(page: &mut Page, app: &TestApp, path: &str) {
    at_laptop_size(page).await;
    open(page, app, path).await;
    let wide = sideways(page).await;
    assert!(
        wide.is_empty(),
        "{path} scrolls sideways at 1366 px: {wide:?}"
    );
}

/// An unbroken run of `n` characters, as long ids and tokens are.
fn long(prefix: &str, n: usize) -> String {
    format!("{prefix}{}", "0123456789abcdef".repeat(n / 16 + 1))[..n].to_string()
}

browser_test!(
    no_dashboard_page_scrolls_sideways_on_a_1366_pixel_screen_with_long_urls_ids_and_errors,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1h"]"#),
                ("HOOKD_DELIVERY__JITTER", "0"),
            ],
        )
        .await;
        let operator = app.operator_key().await;
        let partner = long("ptn_", 120);
        store::partners::create(app.db(), Some(partner.clone()), "Long", app.clock.now_ms())
            .await
            .expect("a partner with a long id");
        let receiver = Receiver::start().await;
        let error = format!(
            "{} {}",
            long("error_", 700),
            "the receiver says no; ".repeat(30)
        );
        receiver.set_default(Reply::with_body(500, error.into_bytes()));
        let url = format!(
            "{}/{}?token={}",
            receiver.url(),
            "a-long-path-segment/".repeat(12),
            long("t", 200)
        );
        let (ep, _) = app.endpoint_for(&partner, &url, &["x.*"], 8).await;
        let event = json!({
            "type": "x.long", "partner_id": partner, "data": {"note": long("n", 400)},
            "subject": {"type": "thing", "id": long("sub_", 250)},
            "correlation_id": long("corr_", 250),
        });
        let (status, body) = app.post_events(&event).await;
        assert_eq!(status, 201, "{body}");
        let ev = body["event_id"].as_str().expect("an event id").to_string();
        app.wait_for_state(&ev, &ep, "failed", WAIT).await;
        let delivery = app.delivery_row(&ev, &ep).await.id;

        let (_browser, mut page) = signed_in(&app, &operator).await;
        for path in [
            "/dashboard/login".to_string(),
            "/dashboard".into(),
            format!("/dashboard?partner_id={partner}"),
            "/dashboard/endpoints".into(),
            format!("/dashboard/endpoints/{ep}"),
            format!("/dashboard/deliveries/{delivery}"),
            format!("/dashboard/events/{ev}"),
            format!("/dashboard/search?partner_id={partner}"),
            format!("/dashboard/no-such-page/{}", long("x", 300)),
        ] {
            fits(&mut page, &app, &path).await;
        }
        let endpoint = format!("/dashboard/endpoints/{ep}");
        fits(&mut page, &app, &endpoint).await;
        submit(&mut page, "rotate", "").await;
        let wide = sideways(&mut page).await;
        assert!(wide.is_empty(), "the rotation's answer: {wide:?}");
        fits(&mut page, &app, &endpoint).await;
        submit(&mut page, "test", "").await;
        let wide = sideways(&mut page).await;
        assert!(
            wide.is_empty(),
            "the endpoint with its test delivery: {wide:?}"
        );
        open(&mut page, &app, "/dashboard/login").await;
        screenshot(&mut page, backend, "login").await;
    }
);
