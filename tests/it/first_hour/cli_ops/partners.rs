//! Partners through the CLI: listed a page at a time as the API lists
//! them, updated as the API then shows them, and audited.

use serde_json::{Value, json};

use super::bed::{Bed, cli_entry};
use crate::harness::Backend;

/// A bed with a second partner, `acme-two`, made by the CLI.
async fn with_acme_two() -> Bed {
    let bed = Bed::start(Backend::Sqlite, &[]).await;
    let created = bed
        .cli_json(&[
            "partner", "create", "--id", "acme-two", "--name", "Acme Two",
        ])
        .await;
    assert_eq!(created["id"], "acme-two", "{created}");
    bed
}

/// `acme-two`'s notification email set by the CLI: what it printed.
async fn email_set_by_the_cli(bed: &Bed) -> Value {
    let email = ["--notification-email", "ops@example.com"];
    bed.cli_json(&[&["partner", "update", "acme-two"], &email[..]].concat())
        .await
}

#[hookd_test_macros::test]
async fn partners_listed_by_the_cli_page_on_and_are_what_the_api_lists() {
    let bed = with_acme_two().await;
    let first = bed.cli_json(&["partner", "list", "--limit", "1"]).await;
    assert_eq!(
        first["data"][0]["id"],
        json!(bed.store.partner_id),
        "{first}"
    );
    let cursor = first["next_cursor"]
        .as_str()
        .expect("a full page points on");
    let second = bed
        .cli_json(&["partner", "list", "--limit", "1", "--after", cursor])
        .await;
    assert_eq!(second["data"][0]["id"], "acme-two", "{second}");
    let op = &bed.store.operator_key;
    let (_, api) = bed.api("GET", "/v1/admin/partners", op, None).await;
    let all = bed.cli_json(&["partner", "list"]).await;
    assert_eq!(all["data"], api["data"], "the CLI lists what the API lists");
}

#[hookd_test_macros::test]
async fn a_partner_updated_by_the_cli_is_what_the_api_and_partner_get_show() {
    let bed = with_acme_two().await;
    let updated = email_set_by_the_cli(&bed).await;
    assert_eq!(
        updated["notification_email"], "ops@example.com",
        "{updated}"
    );
    let op = &bed.store.operator_key;
    let (_, api) = bed
        .api("GET", "/v1/admin/partners/acme-two", op, None)
        .await;
    assert_eq!(api["notification_email"], "ops@example.com", "{api}");
    let shown = bed.cli_json(&["partner", "get", "acme-two"]).await;
    assert_eq!(shown, api, "`partner get` is the API's answer");
}

#[hookd_test_macros::test]
async fn a_partner_update_by_the_cli_is_audited_with_what_it_set() {
    let bed = with_acme_two().await;
    email_set_by_the_cli(&bed).await;
    let entry = cli_entry(&bed.audit("acme-two").await, "partner.update");
    assert_eq!(
        entry["detail"]["notification_email"], "ops@example.com",
        "{entry}"
    );
}

#[hookd_test_macros::test]
async fn the_cli_removes_a_partners_notification_email() {
    let bed = with_acme_two().await;
    email_set_by_the_cli(&bed).await;
    let removed = bed
        .cli_json(&["partner", "update", "acme-two", "--no-notification-email"])
        .await;
    assert!(removed["notification_email"].is_null(), "{removed}");
    let op = &bed.store.operator_key;
    let (_, api) = bed
        .api("GET", "/v1/admin/partners/acme-two", op, None)
        .await;
    assert!(api["notification_email"].is_null(), "the API agrees: {api}");
}
