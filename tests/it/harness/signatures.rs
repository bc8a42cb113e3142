//! What a receiver checks of a signed delivery: the Standard Webhooks
//! signature over `webhook-id`, `webhook-timestamp` and the body, with the
//! one secret it holds, at a time on the test's clock.

use hookd::{
    secret::Secret,
    signing::{self, VerifyError},
};

use super::receiver::Received;

/// How far a request's `webhook-timestamp` may be from now for a receiver
/// to accept it: the five minutes the Standard Webhooks libraries allow.
pub const TOLERANCE_S: i64 = 300;

/// Why a receiver holding only `secret` refuses `r` at `now_ms` (the test's
/// clock), or `Ok` when it accepts it.
pub fn check_signature(secret: &Secret, r: &Received, now_ms: i64) -> Result<(), VerifyError> {
    signing::verify(
        secret,
        r.header("webhook-id").unwrap_or(""),
        r.header("webhook-timestamp").unwrap_or(""),
        r.header("webhook-signature").unwrap_or(""),
        &r.body,
        now_ms / 1000,
        TOLERANCE_S,
    )
}

/// Whether a receiver holding only `secret` accepts `r` at `now_ms`.
pub fn verifies(secret: &Secret, r: &Received, now_ms: i64) -> bool {
    check_signature(secret, r, now_ms).is_ok()
}

/// The entries of `r`'s `webhook-signature` (`v1,…`, one per secret that signed).
pub fn signature_entries(r: &Received) -> Vec<String> {
    r.header("webhook-signature")
        .unwrap_or("")
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect()
}

/// The `webhook-timestamp` of a request, in seconds.
pub fn timestamp(r: &Received) -> i64 {
    r.header("webhook-timestamp")
        .expect("a webhook-timestamp")
        .parse()
        .expect("a webhook-timestamp in seconds")
}
