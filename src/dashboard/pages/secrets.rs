//! An endpoint's signing secret and test send on its page: the forms to
//! rotate the secret (with the overlap the previous one keeps signing),
//! to end that overlap now and to send a `webhook.test` event; the new
//! secret, shown once on the page that answers the rotation; and the test
//! delivery just sent, with its result and a link to it.

use maud::{Markup, html};

use super::{csrf_field, href, when::when};
use crate::store::scoped::DeliveryRow;

/// A key a rotation just made: shown on the page that answers it, and
/// nowhere else (no redirect carries it, no log or audit entry holds it).
pub struct Rotated {
    /// A `whsec_…` secret (`v1`), or a `whpk_…` public key (`v1a`).
    pub shown: String,
    /// When the previous keys stop signing (Unix ms).
    pub previous_until_ms: i64,
}

/// The new key with the end of the overlap.
pub fn rotated(r: &Rotated, now_ms: i64) -> Markup {
    let said = if r.shown.starts_with("whpk_") {
        "Secret rotated to v1a: receivers verify with this public key (it is listed on this page too)."
    } else {
        "Secret rotated: copy this signing secret now; it is not shown again."
    };
    html! {
        div.secret #rotated role="status" {
            p { (said) }
            p { code #secret { (r.shown) } }
            p #overlap { "The previous secret keeps signing until " (when(now_ms, r.previous_until_ms))
                " (" (super::at(r.previous_until_ms)) "); end that sooner with Expire previous secrets." }
        }
    }
}

/// The test delivery just sent: where it stands, linking to it and its event.
pub fn test_delivery(d: &DeliveryRow, now_ms: i64) -> Markup {
    html! {
        dl.facts #test-delivery {
            dt { "Test delivery" } dd { a href=(href("/dashboard/deliveries", &d.id)) { code { (d.id) } } }
            dt { "Event" } dd { a href=(href("/dashboard/events", &d.event_id)) { code { (d.event_id) } } " · " (d.event_type) }
            dt { "State" } dd #test-state { (d.state) }
            dt { "Result" } dd #test-result {
                @match (d.last_status, d.last_error_category.as_deref()) {
                    (Some(s), None) => { "HTTP " (s) }
                    (Some(s), Some(c)) => { "HTTP " (s) " · " (c) }
                    (None, Some(c)) => { (c) }
                    (None, None) => { "no answer yet (reload to see it)" }
                }
                " · " (d.attempt_count) " attempts · updated " (when(now_ms, d.updated_at))
            }
        }
    }
}

/// The forms: rotate, expire the previous secrets, send a test event.
pub fn forms(action: &dyn Fn(&str) -> String, csrf: &str) -> Markup {
    html! {
        div.actions {
            form #rotate method="post" action=(action("rotate")) {
                (csrf_field(csrf))
                p { "A new signing secret; the page that answers shows it once." }
                p { label { "previous keeps signing for (s) "
                    input name="overlap_seconds" type="number" min="0" value="86400" size="8"; } }
                p { label { "scheme "
                    select name="scheme" { option value="v1" { "v1 (HMAC secret)" } option value="v1a" { "v1a (Ed25519)" } } } }
                button type="submit" { "Rotate secret" }
            }
            form #expire-previous method="post" action=(action("expire-previous")) {
                (csrf_field(csrf))
                p { "End the overlap now: only the newest secret signs." }
                button type="submit" { "Expire previous secrets" }
            }
            form #test method="post" action=(action("test")) {
                (csrf_field(csrf))
                p { "Send a webhook.test event to this endpoint only." }
                button type="submit" { "Send test" }
            }
        }
    }
}
