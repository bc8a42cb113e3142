//! Post/Redirect/Get in the portal, in a real browser: every action
//! redirects to the page it belongs to, which says once what was done (a
//! new secret included), so reloading that page repeats nothing; the test
//! event's delivery is shown with its state, a reload showing its result;
//! a refused form comes back inside the page, with the navigation, the
//! input as typed and why at its field.

use hookd::domain::clock::Clock as _;
use serde_json::json;

use super::{
    open, submit, text,
    tour::{Toured, toured},
};
use crate::harness::{Backend, WAIT, browser::docs_screenshot, receiver::Receiver, wait_until};
use crate::on_both_backends;

/// Submits the form of the page whose action ends in `/action`.
fn post(action: &str) -> String {
    format!("document.querySelector(\"form[action$='/{action}']\").submit()")
}

/// Reloads the page as the browser's reload button does.
const RELOAD: &str = "location.reload()";

/// The page's path and query.
async fn location(t: &mut super::Page) -> String {
    let here = t.eval("location.pathname + location.search").await;
    here.as_str().unwrap_or_default().to_string()
}

signed_in_test!(
    a_test_event_redirects_to_its_endpoint_shows_its_delivery_and_a_reload_shows_the_result,
    |app, key, page, backend| {
        let receiver = Receiver::start().await;
        let (id, _) = app.endpoint(&receiver.url()).await;
        let endpoint = format!("/portal/endpoints/{id}");
        open(&mut page, &app, &endpoint).await;
        page.navigate_by(&post("test")).await;
        let here = location(&mut page).await;
        assert!(
            here.starts_with(&format!("{endpoint}?test=dlv_")),
            "redirected to the endpoint's page: {here}"
        );
        let said = text(&mut page, "#flash").await;
        assert!(said.starts_with("Test event evt_"), "{said}");
        let delivery = text(&mut page, "#test-result a").await;
        assert!(
            delivery.starts_with("dlv_"),
            "the test delivery: {delivery}"
        );
        let state = text(&mut page, "#test-result .state").await;
        let pending = text(&mut page, "#test-pending").await;
        assert!(
            state == "delivered" || !pending.is_empty(),
            "a test not answered yet says so: {state} {pending:?}"
        );

        let path = format!("/v1/deliveries/{delivery}");
        wait_until(WAIT, || async {
            let (_, d, _) = app.request("GET", &path, &key, None).await;
            (d["state"] == "delivered").then_some(())
        })
        .await
        .expect("the test is delivered");
        page.navigate_by(RELOAD).await;
        assert_eq!(text(&mut page, "#test-result .state").await, "delivered");
        assert_eq!(text(&mut page, "#flash").await, "", "said once");
        receiver.stays_at(1).await;
        docs_screenshot(&mut page, backend, "portal-test-result").await;
    }
);

signed_in_test!(
    rotating_or_disabling_redirects_to_the_endpoint_and_a_reload_does_neither_again,
    |app, key, page, backend| {
        let (id, _) = app.endpoint("http://127.0.0.1:9/rotated").await;
        let endpoint = format!("/portal/endpoints/{id}");
        open(&mut page, &app, &endpoint).await;
        let to_v1a = "document.querySelector('#rotate_scheme').value = 'v1a';";
        page.navigate_by(&format!("{to_v1a}{}", post("rotate")))
            .await;
        assert_eq!(location(&mut page).await, endpoint);
        assert!(
            text(&mut page, "#secret").await.starts_with("whpk_"),
            "shown once"
        );
        let keys = "document.querySelectorAll('#public-keys code').length";
        assert_eq!(page.eval(keys).await, json!(1));
        page.navigate_by(RELOAD).await;
        assert_eq!(text(&mut page, "#secret").await, "", "not shown again");
        assert_eq!(page.eval(keys).await, json!(1), "and not rotated again");

        page.navigate_by(&post("disable")).await;
        assert_eq!(location(&mut page).await, endpoint);
        assert_eq!(text(&mut page, "#flash").await, "Disabled.");
        let enable = format!("/v1/endpoints/{id}/enable");
        assert_eq!(app.request("POST", &enable, &key, None).await.0, 200);
        page.navigate_by(RELOAD).await;
        let (_, shown, _) = app
            .request("GET", &format!("/v1/endpoints/{id}"), &key, None)
            .await;
        assert_eq!(shown["status"], "active", "the reload disabled nothing");
        assert_eq!(text(&mut page, "#endpoint td.status").await, "active");
    }
);

/// The delivery to the endpoint that answers 500, opened; its id.
async fn failed_delivery_page(t: &mut Toured) -> String {
    let d = t.delivery_to(&t.answered_500).await;
    let id = d["id"].as_str().expect("a delivery").to_string();
    t.open(&format!("/portal/deliveries/{id}")).await;
    id
}

on_both_backends!(
    replaying_and_recovering_redirect_to_their_pages_and_a_reload_sends_nothing_again,
    |backend: Backend| async move {
        let Some(mut t) = toured(backend).await else {
            return;
        };
        let id = failed_delivery_page(&mut t).await;
        t.page.navigate_by(&post("replay")).await;
        assert_eq!(
            location(&mut t.page).await,
            format!("/portal/deliveries/{id}")
        );
        assert!(
            text(&mut t.page, "#flash")
                .await
                .starts_with("Sent again now")
        );
        let failing = &t.receivers[1];
        failing.wait_for(2, WAIT).await.expect("the replay is sent");
        t.page.navigate_by(RELOAD).await;
        assert_eq!(text(&mut t.page, "#flash").await, "");
        failing.stays_at(2).await;
        docs_screenshot(&mut t.page, backend, "portal-replayed").await;

        let endpoint = format!("/portal/endpoints/{}", t.answered_500);
        open(&mut t.page, &t.app, &endpoint).await;
        // The last hour, and the minute to come: the clock stands still.
        let now = t.app.clock.now_ms();
        let time = hookd::domain::event::format_time;
        let (since, until) = (time(now - 3_600_000), time(now + 60_000));
        t.page
            .navigate_by(&submit(
                "#recover-form",
                &[("since", &since), ("until", &until)],
            ))
            .await;
        assert_eq!(location(&mut t.page).await, endpoint);
        assert_eq!(
            text(&mut t.page, "#flash").await,
            "1 deliveries are being sent again."
        );
        failing
            .wait_for(3, WAIT)
            .await
            .expect("the recovery is sent");
        t.page.navigate_by(RELOAD).await;
        assert_eq!(text(&mut t.page, "#flash").await, "");
        failing.stays_at(3).await;
        docs_screenshot(&mut t.page, backend, "portal-recovered").await;
    }
);

/// Asserts the page is a portal page with its navigation, its form `form`
/// kept with `field` as typed (`value`) and marked invalid, and why under it.
async fn refused_in_the_page(page: &mut super::Page, form: &str, field: &str, value: &str) {
    let nav = page
        .eval("document.querySelectorAll('header nav a').length")
        .await;
    assert_eq!(nav, json!(5), "the navigation stays");
    let kept = format!("document.querySelector('{form} #{field}').value");
    assert_eq!(page.eval(&kept).await, json!(value), "the input as typed");
    let invalid = format!("document.querySelector('#{field}').getAttribute('aria-invalid')");
    assert_eq!(page.eval(&invalid).await, json!("true"));
    let why = text(page, &format!("{form} #{field}-error")).await;
    assert!(!why.is_empty(), "why, at the field");
}

signed_in_test!(
    a_refused_url_comes_back_at_its_field_with_the_form_kept_and_the_navigation,
    |app, _key, page, backend| {
        page.navigate_by(&submit(
            "#create-form",
            &[
                ("url", "ftp://example.com/hooks"),
                ("description", "billing"),
            ],
        ))
        .await;
        refused_in_the_page(&mut page, "#create-form", "url", "ftp://example.com/hooks").await;
        assert_eq!(
            page.eval("document.querySelector('#description').value")
                .await,
            json!("billing"),
            "the other fields as typed"
        );
        docs_screenshot(&mut page, backend, "portal-refused").await;

        let (id, _) = app.endpoint("http://127.0.0.1:9/x").await;
        open(&mut page, &app, &format!("/portal/endpoints/{id}")).await;
        page.navigate_by(&submit("#recover-form", &[("since", "last tuesday")]))
            .await;
        refused_in_the_page(&mut page, "#recover-form", "since", "last tuesday").await;

        page.navigate_by(&submit(
            "#headers-form",
            &[
                ("header_name_0", "Host"),
                ("header_value_0", "typed-secret"),
            ],
        ))
        .await;
        let why = text(&mut page, "#headers-form-error").await;
        assert!(why.contains("`Host`"), "why, above the form: {why}");
        let shown = "document.querySelector('#credential-forms').open";
        assert_eq!(
            page.eval(shown).await,
            json!(true),
            "the refused form is shown"
        );
        let html = page.eval("document.documentElement.outerHTML").await;
        assert!(
            !html.to_string().contains("typed-secret"),
            "nothing typed comes back"
        );
    }
);
