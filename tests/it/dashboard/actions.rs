//! The operator's actions from their forms in a real browser: each does
//! what the operator API's does, says so on the page it returns to, and
//! writes exactly one audit entry with via = dashboard.

use hookd::domain::event::format_time;
use serde_json::json;

use super::{assert_one_dashboard_entry, audit_entries, submit, texts};
use crate::harness::{WAIT, browser::Page, wait_until};

browser_test!(
    a_replay_from_the_delivery_page_reaches_the_receiver,
    at(|w| format!("/dashboard/deliveries/{}", w.d_a)),
    |w, page, backend| {
        submit(&mut page, "replay", "").await;
        assert_eq!(
            page.path().await,
            format!("/dashboard/deliveries/{}", w.d_a)
        );
        let done = texts(&mut page, "#done").await;
        assert!(done[0].starts_with("Replay queued"), "{done:?}");

        let got = w.ok.wait_for(2, WAIT).await.expect("the replay arrives");
        assert_eq!(got[1].header("webhook-id"), Some(w.ev_a.as_str()));
        let entries = audit_entries(&w.app).await;
        assert_one_dashboard_entry(&entries, "delivery.replay", &w.d_a, &w.operator_id);
        assert_eq!(entries[0].partner_id.as_deref(), Some(w.partner_a.as_str()));
    }
);

/// The reason the disable form is filled with: markup, shown as text.
const REASON: &str = "receiver on fire <b>, ticket 42";

/// Submits the disable form of the endpoint page open now, with `REASON`.
async fn disable_with_a_reason(page: &mut Page) {
    let fill = format!(
        "document.querySelector('#disable [name=reason]').value = {}",
        json!(REASON)
    );
    submit(page, "disable", &fill).await;
}

browser_test!(
    disabling_from_the_endpoint_page_pauses_what_it_holds_and_writes_one_entry,
    at(|w| format!("/dashboard/endpoints/{}", w.ep_b)),
    |w, page, backend| {
        disable_with_a_reason(&mut page).await;
        assert_eq!(
            page.path().await,
            format!("/dashboard/endpoints/{}", w.ep_b)
        );
        assert_eq!(texts(&mut page, "#status").await, ["disabled"]);
        assert_eq!(texts(&mut page, "#disabled-reason").await, [REASON]);
        assert_eq!(texts(&mut page, "#done").await.len(), 1);
        let state = w.app.delivery(&w.ev_b, &w.ep_b).await.expect("d_b").0;
        assert_eq!(state, "paused", "what it held waits paused");
        let entries = audit_entries(&w.app).await;
        assert_one_dashboard_entry(&entries, "endpoint.disable", &w.ep_b, &w.operator_id);
        assert_eq!(entries[0].detail["reason"], REASON);
        let still = w.app.delivery(&w.ev_a, &w.ep_a).await.expect("d_a").0;
        assert_eq!(still, "delivered", "another endpoint is untouched");
    }
);

browser_test!(
    enabling_from_the_endpoint_page_resumes_what_it_held_and_writes_one_entry,
    at(|w| format!("/dashboard/endpoints/{}", w.ep_b)),
    |w, page, backend| {
        disable_with_a_reason(&mut page).await;
        submit(&mut page, "enable", "").await;
        // Active again; the resumed delivery may already have failed once
        // more against this receiver, which shows it as failing.
        let status = texts(&mut page, "#status").await;
        assert!(status == ["active"] || status == ["failing"], "{status:?}");
        let state = w.app.delivery(&w.ev_b, &w.ep_b).await.expect("d_b").0;
        assert_ne!(state, "paused", "enabling resumes it");
        let entries = audit_entries(&w.app).await;
        assert_eq!(entries.len(), 2, "one more entry: {entries:?}");
        assert_one_dashboard_entry(&entries[..1], "endpoint.enable", &w.ep_b, &w.operator_id);
    }
);

browser_test!(
    recovering_a_range_sends_its_failed_deliveries_again,
    at(|w| format!("/dashboard/endpoints/{}", w.ep_drop)),
    |w, page, backend| {
        // The range ends now (before now, strictly): let a second pass.
        w.app.advance(std::time::Duration::from_secs(1));
        let fill = format!(
            "document.querySelector('#recover [name=since]').value = {}",
            json!(format_time(w.start - 1_000))
        );
        submit(&mut page, "recover", &fill).await;
        let done = texts(&mut page, "#done").await;
        assert!(done[0].contains("1 failed or dead"), "{done:?}");
        let again = wait_until(WAIT, || async {
            let n = w.app.attempts(&w.ev_b, &w.ep_drop).await.len();
            (n == 2).then_some(n)
        })
        .await;
        assert_eq!(again, Some(2), "a manual attempt is made");
        let entries = audit_entries(&w.app).await;
        assert_one_dashboard_entry(&entries, "endpoint.recover", &w.ep_drop, &w.operator_id);
        assert_eq!(entries[0].detail["replayed"], 1);
        assert!(w.dropping.count() >= 2, "the receiver was called again");
    }
);
