//! Text with control characters: event data may hold any JSON string (it
//! is the producer's business), but a partner's name and an endpoint's
//! description may not, since operators read them in terminals and pages.

use super::{
    assert_description_patch_refused, assert_endpoint_refused, assert_problem, events, partners,
};
use hookd_test_macros::both_backends;

#[both_backends]
async fn event_data_may_hold_any_json_string_even_with_control_characters(app: TestApp) {
    let body = format!(
        r#"{{"type": "a.b", "partner_id": "{}", "data": {{"log": "\u001b[31mred\u0000"}}}}"#,
        app.partner_id
    );
    let (status, answer, _) = app.post_events_with(Some(&app.service_key), &body).await;
    assert_eq!(status, 201, "data is the producer's business: {answer}");
    assert_eq!(answer["data"]["log"], "\u{1b}[31mred\u{0}", "{answer}");
    assert_eq!(events(&app).await, 1);
}

#[both_backends]
async fn a_partner_name_with_a_control_character_is_refused_and_not_created(app: TestApp) {
    let operator = app.operator_key().await;
    for (name, what) in [
        (r#"Acme\u0000"#, "a NUL"),
        (r#"\u001b[31mAcme"#, "an ANSI escape"),
        (r#"Ac\u007fme"#, "a DEL"),
    ] {
        let body = format!(r#"{{"name": "{name}"}}"#);
        let answer = app
            .request_raw("POST", "/v1/admin/partners", &operator, &body)
            .await;
        assert_problem(
            &answer,
            422,
            "validation",
            "name",
            &format!("a partner name with {what}"),
        );
    }
    assert_eq!(partners(&app).await, 1, "no partner should be created");
}

#[both_backends]
async fn a_partner_name_in_printable_unicode_is_accepted(app: TestApp) {
    let operator = app.operator_key().await;
    let fine = app
        .request_raw(
            "POST",
            "/v1/admin/partners",
            &operator,
            r#"{"name": "Acme GmbH – Zürich"}"#,
        )
        .await;
    assert_eq!(fine.0, 201, "printable Unicode is a fine name: {}", fine.1);
    assert_eq!(fine.1["name"], "Acme GmbH – Zürich", "kept as given");
}

#[both_backends]
async fn an_endpoint_description_with_a_control_character_is_refused_and_not_created(app: TestApp) {
    let body = r#"{"url": "http://127.0.0.1:9/hooks", "description": "billing\u0007"}"#;
    let what = "a description with a BEL";
    assert_endpoint_refused(&app, body, (422, "validation"), "description", what).await;
}

#[both_backends]
async fn a_description_patched_with_an_escape_is_refused_and_changes_nothing(app: TestApp) {
    let patch = r#"{"description": "\u001b[2J"}"#;
    let what = "a patched description with an escape";
    assert_description_patch_refused(&app, patch, (422, "validation"), what).await;
}
