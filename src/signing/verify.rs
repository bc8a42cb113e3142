//! Verifying a `webhook-signature` header the way a Standard Webhooks receiver does.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use subtle::ConstantTimeEq as _;

use super::{VERSION, signature_bytes};
use crate::secret::Secret;

/// Verifies a message the way a Standard Webhooks receiver does.
///
/// Checks, in order: all three headers are non-empty; the timestamp is a whole number
/// of seconds no more than `tolerance_secs` away from `now` (a negative tolerance counts
/// as zero); and at least one `v1` entry in `signature_header` matches. Entries with
/// another version (`v1a,…`, `v2,…`), no comma, or undecodable base64 are skipped rather
/// than failing the whole header, because senders may add schemes we do not know.
pub fn verify(
    secret: &Secret,
    msg_id: &str,
    timestamp_header: &str,
    signature_header: &str,
    body: &[u8],
    now: i64,
    tolerance_secs: i64,
) -> Result<(), VerifyError> {
    if msg_id.is_empty() {
        return Err(VerifyError::MissingHeader("webhook-id"));
    }
    if timestamp_header.is_empty() {
        return Err(VerifyError::MissingHeader("webhook-timestamp"));
    }
    if signature_header.trim().is_empty() {
        return Err(VerifyError::MissingHeader("webhook-signature"));
    }

    let timestamp = parse_timestamp(timestamp_header)?;
    let tolerance = tolerance_secs.max(0);
    // Saturating so that absurd timestamps (or clocks) cannot overflow into acceptance.
    if now.saturating_sub(timestamp) > tolerance {
        return Err(VerifyError::TimestampTooOld);
    }
    if timestamp.saturating_sub(now) > tolerance {
        return Err(VerifyError::TimestampTooNew);
    }

    // Sign over the parsed number, as the reference libraries do, so e.g. a leading zero
    // in the header cannot make the signed content differ from what the sender signed.
    let expected = signature_bytes(secret, msg_id, timestamp, body);
    let matched = signature_header
        .split_ascii_whitespace()
        .filter_map(|entry| entry.split_once(','))
        .filter(|(version, _)| *version == VERSION)
        .filter_map(|(_, encoded)| STANDARD.decode(encoded).ok())
        // Constant-time on the bytes so response timing does not reveal how much of a
        // forged signature was right; a length mismatch is not secret and fails fast.
        .any(|candidate| bool::from(expected.as_slice().ct_eq(&candidate)));
    if matched {
        Ok(())
    } else {
        Err(VerifyError::NoMatchingSignature)
    }
}

/// Why `verify` rejected a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("required header {0} is missing or empty")]
    MissingHeader(&'static str),
    #[error("webhook-timestamp is not a whole number of seconds since the Unix epoch")]
    TimestampMalformed,
    #[error("webhook-timestamp is older than the allowed tolerance")]
    TimestampTooOld,
    #[error("webhook-timestamp is further in the future than the allowed tolerance")]
    TimestampTooNew,
    #[error("no v1 signature in webhook-signature matches the message")]
    NoMatchingSignature,
}

/// Accepts only ASCII digits: a sign, whitespace, or fraction would be parsed differently
/// by different receivers, and the timestamp is part of the signed content.
fn parse_timestamp(header: &str) -> Result<i64, VerifyError> {
    if !header.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VerifyError::TimestampMalformed);
    }
    header.parse().map_err(|_| VerifyError::TimestampMalformed)
}
