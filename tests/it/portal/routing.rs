//! An endpoint's routing in the portal, in a real browser: ordering chosen
//! in the edit form; a filter tried on a sample before it is saved, refused
//! at the field when no subscribed type can hold its path, saved and
//! removed; a subject held by its dead head listed, and skipped or replayed
//! from the page.

use hookd_test_macros::both_backends;
use serde_json::{Value, json};

use super::{SignedIn, click, open, signed_in_page, signed_in_portal, submit, text};
use crate::filters::{balance, filtered_endpoint};
use crate::harness::{
    Backend, TestApp, WAIT,
    browser::{Browser, Page, skip_browser},
    expect_status,
    receiver::Receiver,
};
use crate::ordering::{HeldByItsHead, a_subject_held_by_its_dead_head};

/// The endpoint `id` as the Partner API shows it.
async fn endpoint_as_the_api_shows_it(app: &TestApp, key: &str, id: &str) -> Value {
    let path = format!("/v1/endpoints/{id}");
    expect_status(&app.request("GET", &path, key, None).await, 200)
}

/// The value of the form field `#id`.
async fn value_of(page: &mut Page, id: &str) -> String {
    let js = format!("document.querySelector({}).value", json!(format!("#{id}")));
    page.eval(&js)
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[both_backends]
async fn ordering_chosen_in_the_edit_form_is_what_the_api_then_shows(backend: Backend) {
    let Some(SignedIn {
        app,
        key,
        browser: _browser,
        mut page,
    }) = signed_in_portal(backend).await
    else {
        return;
    };
    let (id, _) = app.endpoint("http://127.0.0.1:9/ordered").await;
    open(&mut page, &app, &format!("/portal/endpoints/{id}")).await;
    assert_eq!(value_of(&mut page, "ordering").await, "none");
    page.navigate_by(&submit(
        "#edit-form",
        &[("ordering", "subject"), ("ordering_on_dead", "hold")],
    ))
    .await;
    assert_eq!(text(&mut page, "[role=status]").await, "Saved.");
    let shown = endpoint_as_the_api_shows_it(&app, &key, &id).await;
    assert_eq!(
        (&shown["ordering"], &shown["ordering_on_dead"]),
        (&json!("subject"), &json!("hold")),
        "{shown}"
    );
    assert_eq!(
        text(&mut page, "#ordering-shown").await,
        "subject (a dead head: hold)"
    );
    assert_eq!(value_of(&mut page, "ordering_on_dead").await, "hold");
}

/// A portal tab open at an endpoint for `balance.updated` that takes only
/// USD balances, and the endpoint's id; `None` without a browser.
async fn a_filtered_endpoints_page(backend: Backend) -> Option<(SignedIn, String)> {
    let mut s = signed_in_portal(backend).await?;
    let receiver = Receiver::start().await;
    let usd = json!({"field": "data.currency", "eq": "USD"});
    let (id, _) = filtered_endpoint(&s.app, &receiver, json!(["balance.updated"]), usd).await;
    open(&mut s.page, &s.app, &format!("/portal/endpoints/{id}")).await;
    Some((s, id))
}

#[both_backends]
async fn a_filter_in_the_box_is_tried_on_a_sample_without_being_saved(backend: Backend) {
    let Some((mut s, id)) = a_filtered_endpoints_page(backend).await else {
        return;
    };
    let draft = r#"{"field": "data.customer_id", "eq": "cus_1"}"#;
    let sample = |customer: &str| balance(&s.app, customer, "1.00").to_string();
    s.page
        .navigate_by(&click(
            "#test-filter",
            &[("filter_json", draft), ("sample_event", &sample("cus_2"))],
        ))
        .await;
    let tested = text(&mut s.page, "#filter-tested").await;
    assert!(
        tested.starts_with("Not matched (no_match)"),
        "cus_2 does not pass the draft: {tested}"
    );
    assert_eq!(
        value_of(&mut s.page, "filter_json").await,
        draft,
        "the draft stays in the box"
    );
    s.page
        .navigate_by(&click(
            "#test-filter",
            &[("sample_event", &sample("cus_1"))],
        ))
        .await;
    let tested = text(&mut s.page, "#filter-tested").await;
    assert!(tested.starts_with("Matched"), "cus_1 passes: {tested}");
    let shown = endpoint_as_the_api_shows_it(&s.app, &s.key, &id).await;
    assert_eq!(
        shown["filter"],
        json!({"field": "data.currency", "eq": "USD"}),
        "trying a filter does not save it"
    );
}

#[both_backends]
async fn a_filter_no_subscribed_type_can_pass_is_refused_at_the_field_and_a_good_one_is_saved(
    backend: Backend,
) {
    let Some((mut s, id)) = a_filtered_endpoints_page(backend).await else {
        return;
    };
    // No version of balance.updated has a `customer` field.
    let impossible = r#"{"field": "data.customer", "eq": "cus_1"}"#;
    s.page
        .navigate_by(&click("#save-filter", &[("filter_json", impossible)]))
        .await;
    let refused = text(&mut s.page, "#filter-error").await;
    assert!(
        refused.starts_with("filter/field: ") && refused.contains("data.customer"),
        "the refusal names where and what: {refused}"
    );
    assert_eq!(value_of(&mut s.page, "filter_json").await, impossible);
    let kept = endpoint_as_the_api_shows_it(&s.app, &s.key, &id).await;
    assert_eq!(kept["filter"]["field"], "data.currency", "{kept}");

    let good = json!({"field": "data.customer_id", "in": ["cus_1", "cus_3"]});
    s.page
        .navigate_by(&click(
            "#save-filter",
            &[("filter_json", &good.to_string())],
        ))
        .await;
    assert_eq!(text(&mut s.page, "[role=status]").await, "Filter saved.");
    let saved = endpoint_as_the_api_shows_it(&s.app, &s.key, &id).await;
    assert_eq!(saved["filter"], good, "{saved}");

    s.page
        .navigate_by(&click("#save-filter", &[("filter_json", "")]))
        .await;
    let removed = endpoint_as_the_api_shows_it(&s.app, &s.key, &id).await;
    assert_eq!(removed["filter"], Value::Null, "an empty box removes it");
    assert_eq!(
        text(&mut s.page, "#filter-shown").await,
        "none: every event of its types"
    );
}

/// A subject held by its dead head, a portal tab signed in as its partner
/// open at its endpoint, and the selector of the head's row; `None`
/// without a browser.
async fn at_a_held_subject(backend: Backend) -> Option<(HeldByItsHead, Browser, Page, String)> {
    if skip_browser() {
        return None;
    }
    let held = a_subject_held_by_its_dead_head(backend).await;
    let browser = Browser::launch().await;
    let mut page = signed_in_page(&held.app, &browser, &held.key).await;
    let path = format!("/portal/endpoints/{}", held.endpoint);
    open(&mut page, &held.app, &path).await;
    let row = format!("#held-subjects tr[data-delivery='{}']", held.head);
    Some((held, browser, page, row))
}

#[both_backends]
async fn a_subject_held_by_its_dead_head_is_listed_and_skipping_the_head_lets_the_subject_move_on(
    backend: Backend,
) {
    let Some((held, _browser, mut page, row)) = at_a_held_subject(backend).await else {
        return;
    };
    assert_eq!(
        text(&mut page, &format!("{row} .subject")).await,
        "account/s0"
    );
    assert_eq!(
        text(&mut page, &format!("{row} .held-by")).await,
        "dead_head"
    );
    assert_eq!(text(&mut page, &format!("{row} .waiting")).await, "1");

    page.navigate_by(&click(&format!("{row} form[action$='/skip'] button"), &[]))
        .await;
    let said = text(&mut page, "[role=status]").await;
    assert!(
        said.starts_with(&format!("Delivery {} skipped", held.head)),
        "{said}"
    );
    let got = held
        .receiver
        .wait_for(2, WAIT)
        .await
        .expect("the subject's second event is sent");
    assert_eq!(got.len(), 2, "the skipped head is not sent again");
    let path = format!("/v1/deliveries/{}", held.head);
    let head = expect_status(&held.app.request("GET", &path, &held.key, None).await, 200);
    assert_eq!(head["state"], "dead", "a skipped head stays dead: {head}");
}

#[both_backends]
async fn replaying_a_dead_head_from_the_held_subjects_sends_it_and_then_the_subject(
    backend: Backend,
) {
    let Some((held, _browser, mut page, row)) = at_a_held_subject(backend).await else {
        return;
    };
    page.navigate_by(&click(
        &format!("{row} form[action$='/replay'] button"),
        &[],
    ))
    .await;
    let said = text(&mut page, "[role=status]").await;
    assert!(said.ends_with("is being sent again now."), "{said}");
    held.gets_the_head_again_then_the_second_event().await;
}
