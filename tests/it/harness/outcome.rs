//! The check that a delivery reached a state after so many attempts.

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
