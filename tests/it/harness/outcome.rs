//! Checks on what a delivery or an endpoint came to: the state a delivery
//! reached after so many attempts, and the text (an error detail, a reason
//! for disabling) that says why.

use super::{TestApp, WAIT};

/// Waits (within `WAIT`) until the delivery of `event` to `endpoint` is in
/// `state`, and asserts that it took `attempts` attempts to get there; `why`
/// says what that count shows.
pub async fn assert_state_after(
    app: &TestApp,
    event: &str,
    endpoint: &str,
    state: &str,
    attempts: i32,
    why: &str,
) {
    let made = app.wait_for_state(event, endpoint, state, WAIT).await;
    assert_eq!(made, attempts, "{state} after {made} attempts: {why}");
}

/// Asserts that `text` is there and mentions `part`; `what` says what the
/// text is and why it should.
pub fn assert_mentions(text: Option<&str>, part: &str, what: &str) {
    assert!(
        text.is_some_and(|t| t.contains(part)),
        "{what}: {part:?} is not in {text:?}"
    );
}
