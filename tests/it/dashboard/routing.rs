//! An endpoint's routing on the dashboard, over plain HTTP: its ordering,
//! what a dead head does and its filter (pretty JSON, escaped), and a
//! subject held by its dead head, whose head the page's forms skip or
//! replay, each audited once as done through the dashboard.

use hookd::store::keys::Role;
use hookd_test_macros::both_backends;
use serde_json::json;

use super::{
    assert_one_dashboard_entry, audit_entries, part_of,
    refusals::{send, session, token},
};
use crate::harness::{Backend, WAIT, expect_status};
use crate::ordering::{HeldByItsHead, a_subject_held_by_its_dead_head};

/// A subject held by its dead head and an operator signed in to the
/// dashboard: (the held subject, the operator's key id, its session).
async fn an_operator_at_a_held_subject(backend: Backend) -> (HeldByItsHead, String, String) {
    let held = a_subject_held_by_its_dead_head(backend).await;
    let operator = held.app.key(Role::Operator, None).await;
    let signed = session(&held.app, &operator.key).await;
    (held, operator.id, signed)
}

/// The page at `path` as `session` sees it: (status, HTML).
async fn page_at(held: &HeldByItsHead, path: &str, session: &str) -> (u16, String) {
    let got = send(&held.app, ("GET", path), session, "", None).await;
    (got.answer.status, got.body)
}

/// Posts the form `action` (`skip`, or `replay` with `back=endpoint`) of
/// the head's row, with the page's token, from hookd's own origin, which
/// must send the browser back to the endpoint saying `done`; returns where.
async fn post_on_the_head(
    held: &HeldByItsHead,
    session: &str,
    (action, done): (&str, &str),
) -> String {
    let page = format!("/dashboard/endpoints/{}", held.endpoint);
    let csrf = token(&held.app, &page, session).await;
    let path = format!("/dashboard/deliveries/{}/{action}", held.head);
    let form = format!("csrf={csrf}&back=endpoint");
    let own = held.app.base_url.clone();
    let got = send(&held.app, ("POST", &path), session, &own, Some(&form)).await;
    assert_eq!(got.answer.status, 303, "{action}: {}", got.body);
    let back = got.answer.location.unwrap_or_default();
    let endpoint = format!("/dashboard/endpoints/{}?done={done}", held.endpoint);
    assert_eq!(back, endpoint, "{action} returns to the endpoint");
    back
}

#[both_backends]
async fn the_endpoint_page_shows_its_ordering_its_filter_escaped_and_its_held_subject(
    backend: Backend,
) {
    let (held, _, session) = an_operator_at_a_held_subject(backend).await;
    let markup = "<script>alert(1)</script>";
    let filter = json!({"filter": {"field": "data.note", "eq": markup}});
    let path = format!("/v1/endpoints/{}", held.endpoint);
    let patched = held.app.request("PATCH", &path, &held.key, Some(&filter));
    expect_status(&patched.await, 200);

    let at = format!("/dashboard/endpoints/{}", held.endpoint);
    let (status, page) = page_at(&held, &at, &session).await;
    assert_eq!(status, 200, "{page}");
    let routing = part_of(&page, "id=\"routing\"", "</dl>");
    assert!(routing.contains("subject · a dead head: hold"), "{routing}");
    assert!(
        routing.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the filter is shown, escaped: {routing}"
    );
    assert!(!page.contains(markup), "the filter's markup is not markup");
    let row = part_of(&page, &format!("data-delivery=\"{}\"", held.head), "</tr>");
    for shown in ["account/s0", "dead_head", "/skip", "/replay"] {
        assert!(row.contains(shown), "`{shown}` in {row}");
    }
}

#[both_backends]
async fn skipping_a_dead_head_from_the_endpoint_page_lets_its_subject_move_on_and_is_audited(
    backend: Backend,
) {
    let (held, operator_id, session) = an_operator_at_a_held_subject(backend).await;
    let back = post_on_the_head(&held, &session, ("skip", "skipped")).await;
    held.receiver
        .wait_for(2, WAIT)
        .await
        .expect("the subject's second event is sent");
    let entries = audit_entries(&held.app).await;
    assert_one_dashboard_entry(&entries, "delivery.skip", &held.head, &operator_id);

    let (_, page) = page_at(&held, &back, &session).await;
    assert!(page.contains("Skipped: the subject"), "the page says so");
    assert!(
        !page.contains(&format!("data-delivery=\"{}\"", held.head)),
        "the skipped head holds nothing"
    );
}

#[both_backends]
async fn replaying_a_dead_head_from_the_held_subjects_returns_to_the_endpoint_and_is_audited(
    backend: Backend,
) {
    let (held, operator_id, session) = an_operator_at_a_held_subject(backend).await;
    post_on_the_head(&held, &session, ("replay", "replayed")).await;
    held.gets_the_head_again_then_the_second_event().await;
    let entries = audit_entries(&held.app).await;
    assert_one_dashboard_entry(&entries, "delivery.replay", &held.head, &operator_id);
}
