//! The portal's pages in a real browser: only the partner's own endpoints,
//! creating one and seeing its secret, a test event signed with it,
//! rotating it, and the notification channel.

use hookd::{domain::clock::Clock as _, secret::Secret};
use hookd_test_macros::both_backends;
use serde_json::json;

use super::{SignedIn, open, signed_in_page, signed_in_portal, submit, text};
use crate::harness::{
    Backend, SLOW, TestApp, WAIT,
    browser::{Browser, Page},
    browser_app::app_and_browser,
    receiver::Receiver,
    signatures::check_signature,
    wait_until,
};
use crate::on_both_backends;

#[both_backends]
async fn a_partner_sees_only_its_own_endpoints_and_another_partners_id_is_a_404_page(
    backend: Backend,
) {
    let Some((app, browser)) = app_and_browser(backend).await else {
        return;
    };
    let key = app.partner_key().await;
    let (mine, _) = app.endpoint("http://127.0.0.1:9/mine").await;
    let (other_partner, _) = app.another_partner("Globex").await;
    let (theirs, _) = app
        .endpoint_for(&other_partner, "http://127.0.0.1:9/theirs", &[], 8)
        .await;
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

    open(&mut page, &app, &format!("/portal/endpoints/{theirs}")).await;
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
    open(&mut page, &app, &format!("/portal/endpoints/{mine}")).await;
    assert_eq!(
        text(&mut page, "#endpoint td").await,
        "http://127.0.0.1:9/mine"
    );
}

/// A portal tab where the partner just created an endpoint at a new
/// receiver for `usage.*` and `webhook.test`, on the page that shows its
/// secret; `None` without a browser.
struct Created {
    app: TestApp,
    key: String,
    receiver: Receiver,
    _browser: Browser,
    page: Page,
    /// The secret the page showed.
    secret: Secret,
}

async fn created_in_the_portal(backend: Backend) -> Option<Created> {
    let SignedIn {
        app,
        key,
        browser,
        mut page,
    } = signed_in_portal(backend).await?;
    let receiver = Receiver::start().await;
    page.navigate_by(&submit(
        "form[action='/portal/endpoints']",
        &[
            ("url", &receiver.url()),
            ("event_types", "usage.*, webhook.test"),
        ],
    ))
    .await;
    let secret = Secret::parse(&text(&mut page, "#secret").await).expect("the new secret is shown");
    Some(Created {
        app,
        key,
        receiver,
        _browser: browser,
        page,
        secret,
    })
}

impl Created {
    /// The endpoint's id, as the API lists it.
    async fn id(&self) -> String {
        let (status, listed, _) = self
            .app
            .request("GET", "/v1/endpoints", &self.key, None)
            .await;
        assert_eq!(status, 200);
        listed["data"][0]["id"]
            .as_str()
            .expect("the endpoint exists")
            .to_string()
    }

    /// Opens the endpoint's page in the tab; returns the endpoint's id.
    async fn open_endpoint_page(&mut self) -> String {
        let id = self.id().await;
        open(
            &mut self.page,
            &self.app,
            &format!("/portal/endpoints/{id}"),
        )
        .await;
        id
    }

    /// Submits the form of the endpoint's page whose action ends in `/action`.
    async fn submit_endpoint_form(&mut self, action: &str) {
        let js = format!("document.querySelector(\"form[action$='/{action}']\").submit()");
        self.page.navigate_by(&js).await;
    }
}

/// A test on both backends (as `on_both_backends!`) given an endpoint
/// created in the portal: `created_test!(name, |c, backend| { … })`, where
/// `c` is the `Created`; it passes without running when there is no browser.
macro_rules! created_test {
    ($name:ident, |$c:ident, $backend:ident| $body:block) => {
        on_both_backends!($name, |$backend: Backend| async move {
            let Some(mut $c) = created_in_the_portal($backend).await else {
                return;
            };
            $body
        });
    };
}

created_test!(
    an_endpoint_created_in_the_portal_exists_as_entered_and_its_secret_is_shown,
    |c, _backend| {
        let endpoint = c.page.path().await;
        assert!(endpoint.starts_with("/portal/endpoints"), "{endpoint}");
        let (_, listed, _) = c.app.request("GET", "/v1/endpoints", &c.key, None).await;
        assert_eq!(
            listed["data"][0]["event_types"],
            json!(["usage.*", "webhook.test"])
        );
        assert!(c.secret.expose().starts_with("whsec_"));
    }
);

created_test!(
    a_test_sent_from_the_portal_arrives_signed_with_the_secret_the_portal_showed,
    |c, _backend| {
        c.open_endpoint_page().await;
        c.submit_endpoint_form("test").await;
        assert!(
            text(&mut c.page, "[role=status]")
                .await
                .starts_with("Test event evt_")
        );
        let got = c
            .receiver
            .wait_for(1, SLOW)
            .await
            .expect("the test event arrives");
        let r = &got[0];
        let verified = check_signature(&c.secret, r, c.app.clock.now_ms());
        assert!(
            verified.is_ok(),
            "signed with the secret the portal showed: {verified:?}"
        );
        let (app, key) = (&c.app, &c.key);
        wait_until(WAIT, || async {
            let (_, d, _) = app.request("GET", "/v1/deliveries", key, None).await;
            (d["data"][0]["state"] == "delivered").then_some(())
        })
        .await
        .expect("the test delivery is recorded");
    }
);

created_test!(
    rotating_in_the_portal_shows_a_new_secret_once,
    |c, _backend| {
        c.open_endpoint_page().await;
        assert_eq!(text(&mut c.page, "#secret").await, "", "no secret before");
        c.submit_endpoint_form("rotate").await;
        let rotated = text(&mut c.page, "#secret").await;
        assert!(
            rotated.starts_with("whsec_") && rotated != c.secret.expose(),
            "a new secret is shown once"
        );
        c.open_endpoint_page().await;
        assert_eq!(text(&mut c.page, "#secret").await, "", "and not again");
    }
);

/// A portal tab where the partner set its notification email and URL (a
/// new receiver's) in the settings: (app, key, receiver, browser, page);
/// `None` without a browser.
async fn channel_set_in_the_portal(
    backend: Backend,
) -> Option<(TestApp, String, Receiver, Browser, Page)> {
    let SignedIn {
        app,
        key,
        browser,
        mut page,
    } = signed_in_portal(backend).await?;
    let receiver = Receiver::start().await;
    open(&mut page, &app, "/portal/settings").await;
    page.navigate_by(&submit(
        "form[action='/portal/settings']",
        &[
            ("notification_email", "ops@acme.example"),
            ("notification_url", &receiver.url()),
        ],
    ))
    .await;
    Some((app, key, receiver, browser, page))
}

#[both_backends]
async fn a_partner_sets_its_notification_channel_in_the_portal_and_sees_the_urls_secret(
    backend: Backend,
) {
    let Some((app, key, receiver, _browser, mut page)) = channel_set_in_the_portal(backend).await
    else {
        return;
    };
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
}

#[both_backends]
async fn emptying_a_portal_setting_removes_it_and_the_urls_secret_is_not_shown_again(
    backend: Backend,
) {
    let Some((app, key, _receiver, _browser, mut page)) = channel_set_in_the_portal(backend).await
    else {
        return;
    };
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
