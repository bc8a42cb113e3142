//! The signer and the verifier, on the Standard Webhooks reference vector and
//! on vectors computed outside hookd (Python's `hmac`), so a bug the two
//! share cannot pass.

use super::*;

// The Standard Webhooks reference vector, shared by all the official libraries' tests.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP: i64 = 1614265330;
const BODY: &[u8] = br#"{"test": 2432232314}"#;
const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
// A well-formed v1 signature that belongs to nothing here (from the reference multi-signature test).
const UNRELATED: &str = "Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";

fn secret() -> Secret {
    Secret::parse(SECRET).expect("the reference secret should parse")
}

/// Verifies the reference message with `header` at the moment it was sent.
fn check(header: &str) -> Result<(), VerifyError> {
    check_with(&secret(), &TIMESTAMP.to_string(), header, TIMESTAMP)
}

/// Verifies the reference message's id and body under `secret`, with this
/// `timestamp` header and `signature` header, at `now`, within the default
/// tolerance.
fn check_with(
    secret: &Secret,
    timestamp: &str,
    signature: &str,
    now: i64,
) -> Result<(), VerifyError> {
    verify(
        secret,
        MSG_ID,
        timestamp,
        signature,
        BODY,
        now,
        DEFAULT_TOLERANCE_SECS,
    )
}

mod header_entries;
mod tampering;
mod timestamps;
mod vectors;
