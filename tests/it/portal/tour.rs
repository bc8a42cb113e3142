//! Every page of the portal with real data, in a real browser at a phone's
//! width and a desktop's: a value in every column of every table (the
//! events page once showed an empty Event column), the deliveries' endpoint
//! column, an attempt's detail in full, states as badges, readable times,
//! buttons apart, and no page wider than the window.

use serde_json::{Value, json};

use super::{
    SignedIn, open, signed_in_portal, text,
    viewport::{
        DESKTOP, PHONE, buttons_that_touch, columns, empty_cells, phone_screenshot,
        scrolls_sideways, set_width, times, wrapped_times,
    },
};
use crate::harness::{
    Backend, TestApp, WAIT,
    browser::{Browser, Page, docs_screenshot},
    receiver::{Receiver, Reply},
    wait_until,
};
use crate::on_both_backends;

/// A partner whose one event went to three endpoints: one that took it
/// (and sends a static header), one that answered 500, one that refused the
/// connection; with a portal tab signed in as the partner.
pub struct Toured {
    pub app: TestApp,
    pub key: String,
    pub _browser: Browser,
    pub page: Page,
    pub receivers: [Receiver; 2],
    pub event_id: String,
    /// The endpoints: delivered to, answered 500, refused the connection.
    pub took: String,
    pub answered_500: String,
    pub refused: String,
}

impl Toured {
    /// The delivery of the event to `endpoint`, as the API shows it.
    pub async fn delivery_to(&self, endpoint: &str) -> Value {
        let path = format!("/v1/deliveries?endpoint_id={endpoint}");
        let (_, found, _) = self.app.request("GET", &path, &self.key, None).await;
        found["data"][0].clone()
    }

    pub async fn open(&mut self, path: &str) {
        open(&mut self.page, &self.app, path).await;
    }
}

/// Every delivery of the partner has had its first attempt.
async fn all_attempted(app: &TestApp, key: &str, n: usize) {
    wait_until(WAIT, || async {
        let (_, d, _) = app.request("GET", "/v1/deliveries", key, None).await;
        let list = d["data"].as_array()?;
        let done = list
            .iter()
            .filter(|d| d["attempt_count"].as_i64() >= Some(1))
            .count();
        (list.len() == n && done == n).then_some(())
    })
    .await
    .expect("every delivery has had an attempt");
}

/// A `Toured` partner; `None` when browser tests are skipped.
pub async fn toured(backend: Backend) -> Option<Toured> {
    let SignedIn {
        app,
        key,
        browser,
        page,
    } = signed_in_portal(backend).await?;
    let taker = Receiver::start().await;
    taker.set_default(Reply::with_body(200, r#"{"received": true}"#));
    let failing = Receiver::start().await;
    failing.set_default(Reply::with_body(500, "upstream exploded"));
    let (took, _) = app.endpoint(&format!("{}/hooks", taker.url())).await;
    let (answered_500, _) = app.endpoint(&format!("{}/hooks", failing.url())).await;
    let (refused, _) = app.endpoint("http://127.0.0.1:9/closed").await;
    let event = json!({
        "type": "balance.updated", "partner_id": app.partner_id,
        "subject": {"type": "customer", "id": "cus_42"},
        "data": {"customer_id": "cus_42", "balance": "12.50", "currency": "USD"},
    });
    let (status, published) = app.post_events(&event).await;
    assert_eq!(status, 201, "{published}");
    let event_id = published["event_id"]
        .as_str()
        .expect("an event id")
        .to_string();
    all_attempted(&app, &key, 3).await;
    let headers = json!({"headers": {"X-Api-Key": "k-123-secret"}});
    let path = format!("/v1/endpoints/{took}/auth/headers");
    let (status, set, _) = app.request("PUT", &path, &key, Some(&headers)).await;
    assert_eq!(status, 200, "{set}");
    Some(Toured {
        app,
        key,
        _browser: browser,
        page,
        receivers: [taker, failing],
        event_id,
        took,
        answered_500,
        refused,
    })
}

/// A portal test given a `Toured` partner `t`, on both backends; it passes
/// without running when there is no browser.
macro_rules! tour_test {
    ($name:ident, |$t:ident, $backend:ident| $body:block) => {
        on_both_backends!($name, |$backend: Backend| async move {
            let Some(mut $t) = toured($backend).await else {
                return;
            };
            $body
        });
    };
}

/// Every page of the portal, by name (`portal-<name>.png`) and path.
async fn every_page(t: &Toured) -> Vec<(&'static str, String)> {
    let delivery = t.delivery_to(&t.answered_500).await;
    let delivery = delivery["id"].as_str().unwrap_or_default().to_string();
    vec![
        ("endpoints", "/portal".to_string()),
        ("endpoint", format!("/portal/endpoints/{}", t.took)),
        ("deliveries", "/portal/deliveries".to_string()),
        ("delivery", format!("/portal/deliveries/{delivery}")),
        ("events", "/portal/events".to_string()),
        ("event", format!("/portal/events/{}", t.event_id)),
        ("settings", "/portal/settings".to_string()),
        ("sign-in", "/portal/login".to_string()),
    ]
}

tour_test!(
    every_portal_page_has_a_value_in_every_column_and_fits_a_phone_and_a_desktop,
    |t, backend| {
        for (name, path) in every_page(&t).await {
            t.open(&path).await;
            for width in [PHONE, DESKTOP] {
                set_width(&mut t.page, width).await;
                let at = format!("{path} at {width} px");
                assert!(
                    !scrolls_sideways(&mut t.page).await,
                    "{at} scrolls sideways"
                );
                assert_eq!(empty_cells(&mut t.page).await, Vec::<String>::new(), "{at}");
                assert_eq!(
                    buttons_that_touch(&mut t.page).await,
                    Vec::<String>::new(),
                    "{at}"
                );
                assert_eq!(
                    wrapped_times(&mut t.page).await,
                    Vec::<String>::new(),
                    "{at}"
                );
            }
            docs_screenshot(&mut t.page, backend, &format!("portal-{name}")).await;
            if name == "delivery" {
                phone_screenshot(&mut t.page, backend, "portal-delivery-phone").await;
            }
        }
    }
);

tour_test!(
    the_events_page_names_every_event_and_links_its_page,
    |t, _backend| {
        t.open("/portal/events").await;
        assert_eq!(
            text(&mut t.page, "#events td:first-child").await,
            t.event_id,
            "the Event column holds the event's id"
        );
        assert_eq!(
            text(&mut t.page, "#events td:nth-child(3)").await,
            "customer/cus_42"
        );
        let js = "document.querySelector('#events td:first-child a').click()";
        t.page.navigate_by(js).await;
        assert_eq!(
            t.page.path().await,
            format!("/portal/events/{}", t.event_id)
        );
        let sent = text(&mut t.page, "#envelope pre").await;
        assert!(
            sent.contains(r#""balance": "12.50""#),
            "the event as delivered: {sent}"
        );
        let listed = t
            .page
            .eval("[...document.querySelectorAll('#deliveries tr[data-delivery]')].length")
            .await;
        assert_eq!(listed, json!(3), "its three deliveries");
    }
);

tour_test!(
    the_deliveries_list_shows_each_deliverys_endpoint_and_links_it,
    |t, _backend| {
        t.open("/portal/deliveries").await;
        assert_eq!(
            columns(&mut t.page, "#deliveries").await,
            [
                "Delivery",
                "Endpoint",
                "Event",
                "State",
                "Attempts",
                "Last answer",
                "Created"
            ]
        );
        let js = "[...document.querySelectorAll('#deliveries td.endpoint a')].map(a => [a.textContent, a.getAttribute('href')])";
        let mut shown: Vec<Value> = t
            .page
            .eval(js)
            .await
            .as_array()
            .cloned()
            .unwrap_or_default();
        shown.sort_by_key(|v| v[0].as_str().unwrap_or_default().to_string());
        let mut want: Vec<Value> = [&t.took, &t.answered_500, &t.refused]
            .iter()
            .map(|id| json!([id, format!("/portal/endpoints/{id}")]))
            .collect();
        want.sort_by_key(|v| v[0].as_str().unwrap_or_default().to_string());
        assert_eq!(shown, want);
    }
);

tour_test!(
    an_attempt_shows_its_answer_detail_duration_remote_address_and_response,
    |t, _backend| {
        let failed = t.delivery_to(&t.answered_500).await;
        t.open(&format!(
            "/portal/deliveries/{}",
            failed["id"].as_str().unwrap()
        ))
        .await;
        assert_eq!(
            text(&mut t.page, "#attempts td.answer").await,
            "500 http_status"
        );
        assert!(
            !text(&mut t.page, "#attempts td.detail")
                .await
                .trim()
                .is_empty()
        );
        assert!(
            text(&mut t.page, "#attempts td.duration")
                .await
                .ends_with(" ms"),
            "the attempt's duration"
        );
        let remote = text(&mut t.page, "#attempts td.remote").await;
        assert!(
            remote.starts_with("127.0.0.1:"),
            "the address answered from: {remote}"
        );
        let url = text(&mut t.page, "#attempts td.url").await;
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "the URL the attempt went to: {url}"
        );
        let next = text(&mut t.page, "#attempts td.next-retry").await;
        assert!(
            next != "–",
            "the retry the failed attempt scheduled: {next}"
        );
        assert_eq!(
            text(&mut t.page, "#attempts td.excerpt").await,
            "upstream exploded"
        );

        let refused = t.delivery_to(&t.refused).await;
        t.open(&format!(
            "/portal/deliveries/{}",
            refused["id"].as_str().unwrap()
        ))
        .await;
        assert_eq!(text(&mut t.page, "#attempts td.answer").await, "connect");
        let detail = text(&mut t.page, "#attempts td.detail").await;
        assert!(
            detail.len() > 3 && detail != "–",
            "a refused connection says more than its category: {detail:?}"
        );
    }
);

tour_test!(
    states_are_badges_and_times_are_relative_with_the_exact_time_on_hover,
    |t, _backend| {
        t.open("/portal/deliveries").await;
        let js = "[...document.querySelectorAll('#deliveries td.state .badge')].map(b => b.className + ' ' + b.textContent).sort()";
        assert_eq!(
            t.page.eval(js).await,
            json!([
                "badge good delivered",
                "badge warn failed",
                "badge warn failed"
            ])
        );
        let shown = times(&mut t.page).await;
        assert!(!shown.is_empty(), "the list shows when each was created");
        for (relative, exact) in shown {
            assert!(
                relative == "now" || relative.ends_with(" ago"),
                "relative: {relative}"
            );
            assert!(exact.ends_with(" UTC"), "exact on hover: {exact}");
        }
        t.open("/portal").await;
        let js =
            "[...document.querySelectorAll('#endpoints td.status .badge')].map(b => b.textContent)";
        let words = t.page.eval(js).await;
        assert!(
            words
                .as_array()
                .is_some_and(|w| w.len() == 3 && w.iter().all(|w| w == "active" || w == "failing")),
            "{words}"
        );
    }
);
