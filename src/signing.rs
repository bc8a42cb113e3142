//! Owns Standard Webhooks signing: building the `webhook-signature` header and verifying it as a receiver would.
//!
//! Signed content is `{webhook-id}.{webhook-timestamp}.{body}` over the exact body bytes;
//! each signature is `v1,` + base64(HMAC-SHA256(secret key, signed content)).
//! See <https://www.standardwebhooks.com>.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac as _};
use sha2::Sha256;
use subtle::ConstantTimeEq as _;

use crate::secret::Secret;

type HmacSha256 = Hmac<Sha256>;

/// How far a receiver lets `webhook-timestamp` drift from its clock, in either direction.
pub const DEFAULT_TOLERANCE_SECS: i64 = 300;

/// The only signature scheme this module produces or accepts (symmetric HMAC-SHA256).
const VERSION: &str = "v1";

/// The `webhook-signature` header value: one `v1,<base64>` entry per secret, in the
/// given order, separated by single spaces. Several secrets are signed during rotation
/// so receivers holding either the old or the new secret accept the message.
/// An empty `secrets` slice gives an empty string.
pub fn signature_header(secrets: &[Secret], msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|secret| sign(secret, msg_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One `v1,<base64>` signature entry for `secret`.
pub fn sign(secret: &Secret, msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    let tag = signature_bytes(secret, msg_id, timestamp, body);
    format!("{VERSION},{}", STANDARD.encode(tag))
}

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

fn signature_bytes(secret: &Secret, msg_id: &str, timestamp: i64, body: &[u8]) -> [u8; 32] {
    // HMAC takes keys of any length, so this constructor cannot fail.
    let mut mac =
        HmacSha256::new_from_slice(secret.key()).expect("HMAC accepts keys of any length");
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
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
        verify(
            &secret(),
            MSG_ID,
            &TIMESTAMP.to_string(),
            header,
            BODY,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        )
    }

    #[test]
    fn the_reference_vector_signs_to_the_published_signature() {
        assert_eq!(
            sign(&secret(), MSG_ID, TIMESTAMP, BODY),
            SIGNATURE,
            "signature differs from the spec's test vector"
        );
    }

    #[test]
    fn the_reference_vector_verifies() {
        assert_eq!(
            check(SIGNATURE),
            Ok(()),
            "the spec's own signature was rejected"
        );
    }

    #[test]
    fn a_header_for_one_secret_is_just_its_signature() {
        let header = signature_header(&[secret()], MSG_ID, TIMESTAMP, BODY);
        assert_eq!(
            header, SIGNATURE,
            "single-secret header is not exactly the one signature"
        );
    }

    #[test]
    fn a_header_for_several_secrets_lists_one_signature_each_in_order() {
        let other = Secret::generate();
        let header = signature_header(&[secret(), other.clone()], MSG_ID, TIMESTAMP, BODY);
        let expected = format!("{SIGNATURE} {}", sign(&other, MSG_ID, TIMESTAMP, BODY));
        assert_eq!(
            header, expected,
            "multi-secret header is not the space-joined signatures in order"
        );
        for s in [secret(), other] {
            assert_eq!(
                verify(
                    &s,
                    MSG_ID,
                    &TIMESTAMP.to_string(),
                    &header,
                    BODY,
                    TIMESTAMP,
                    DEFAULT_TOLERANCE_SECS
                ),
                Ok(()),
                "a receiver holding one of the signing secrets rejected the header"
            );
        }
    }

    #[test]
    fn a_header_for_no_secrets_is_empty() {
        assert_eq!(
            signature_header(&[], MSG_ID, TIMESTAMP, BODY),
            "",
            "no secrets should give no signatures"
        );
    }

    #[test]
    fn a_header_with_several_signatures_passes_when_only_one_matches() {
        let header = format!("v1,{UNRELATED} v2,{UNRELATED} {SIGNATURE} v1,{UNRELATED}");
        assert_eq!(
            check(&header),
            Ok(()),
            "the one matching signature among decoys was not found"
        );
    }

    #[test]
    fn a_signature_with_an_unknown_version_prefix_is_ignored() {
        let bare = &SIGNATURE["v1,".len()..];
        for header in [
            format!("v1a,{bare}"),
            format!("v2,{bare}"),
            format!("V1,{bare}"),
            format!(",{bare}"),
        ] {
            assert_eq!(
                check(&header),
                Err(VerifyError::NoMatchingSignature),
                "the correct MAC under version {header:?} was accepted"
            );
        }
    }

    #[test]
    fn a_signature_without_a_version_prefix_is_ignored() {
        let bare = &SIGNATURE["v1,".len()..];
        assert_eq!(
            check(bare),
            Err(VerifyError::NoMatchingSignature),
            "a bare signature with no v1, was accepted"
        );
    }

    #[test]
    fn malformed_entries_are_skipped_rather_than_fatal() {
        let header = format!(
            "v1,not*base64 v1, garbage v1,{} {SIGNATURE}",
            &SIGNATURE[3..20]
        );
        assert_eq!(
            check(&header),
            Ok(()),
            "a malformed entry stopped the valid one from being checked"
        );
    }

    #[test]
    fn extra_spaces_between_entries_are_tolerated() {
        let header = format!("  v1,{UNRELATED}   {SIGNATURE} ");
        assert_eq!(
            check(&header),
            Ok(()),
            "extra whitespace broke header parsing"
        );
    }

    #[test]
    fn an_invalid_signature_is_rejected() {
        // The reference signature with its last base64 character changed.
        assert_eq!(
            check("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA="),
            Err(VerifyError::NoMatchingSignature),
            "a signature one character off was accepted"
        );
        assert_eq!(
            check("v1,dawfeoifkpqwoekfpqoekf"),
            Err(VerifyError::NoMatchingSignature),
            "a short garbage signature was accepted"
        );
    }

    #[test]
    fn a_partial_signature_is_rejected() {
        assert_eq!(
            check(&SIGNATURE[..8]),
            Err(VerifyError::NoMatchingSignature),
            "a truncated signature was accepted"
        );
        assert_eq!(
            check("v1,"),
            Err(VerifyError::NoMatchingSignature),
            "an empty v1 entry was accepted"
        );
        let truncated_bytes =
            STANDARD.encode(&STANDARD.decode(&SIGNATURE[3..]).expect("valid base64")[..16]);
        assert_eq!(
            check(&format!("v1,{truncated_bytes}")),
            Err(VerifyError::NoMatchingSignature),
            "a prefix of the correct MAC was accepted"
        );
    }

    #[test]
    fn a_tampered_body_is_rejected() {
        let result = verify(
            &secret(),
            MSG_ID,
            &TIMESTAMP.to_string(),
            SIGNATURE,
            br#"{"test": 2432232315}"#,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::NoMatchingSignature),
            "a changed body was accepted"
        );
    }

    #[test]
    fn a_body_differing_only_in_whitespace_is_rejected() {
        let result = verify(
            &secret(),
            MSG_ID,
            &TIMESTAMP.to_string(),
            SIGNATURE,
            br#"{"test":2432232314}"#,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::NoMatchingSignature),
            "signature was not over the exact body bytes"
        );
    }

    #[test]
    fn a_tampered_message_id_is_rejected() {
        let result = verify(
            &secret(),
            "msg_p5jXN8AQM9LWM0D4loKWxJeK",
            &TIMESTAMP.to_string(),
            SIGNATURE,
            BODY,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::NoMatchingSignature),
            "a changed webhook-id was accepted"
        );
    }

    #[test]
    fn a_tampered_timestamp_is_rejected_even_within_tolerance() {
        let shifted = TIMESTAMP + 1;
        let result = verify(
            &secret(),
            MSG_ID,
            &shifted.to_string(),
            SIGNATURE,
            BODY,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::NoMatchingSignature),
            "a changed webhook-timestamp was accepted"
        );
    }

    #[test]
    fn a_signature_from_the_wrong_secret_is_rejected() {
        let wrong = Secret::generate();
        let result = verify(
            &wrong,
            MSG_ID,
            &TIMESTAMP.to_string(),
            SIGNATURE,
            BODY,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::NoMatchingSignature),
            "a signature made with another secret was accepted"
        );
    }

    #[test]
    fn a_signature_from_a_rotated_out_secret_is_rejected() {
        let old = Secret::generate();
        let new = Secret::generate();
        // During rotation both secrets sign; afterwards only the new one does.
        let after_rotation = signature_header(std::slice::from_ref(&new), MSG_ID, TIMESTAMP, BODY);
        let as_old_receiver = verify(
            &old,
            MSG_ID,
            &TIMESTAMP.to_string(),
            &after_rotation,
            BODY,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            as_old_receiver,
            Err(VerifyError::NoMatchingSignature),
            "the retired secret still verified"
        );
        let old_signature = sign(&old, MSG_ID, TIMESTAMP, BODY);
        let as_new_receiver = verify(
            &new,
            MSG_ID,
            &TIMESTAMP.to_string(),
            &old_signature,
            BODY,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            as_new_receiver,
            Err(VerifyError::NoMatchingSignature),
            "a signature by the retired secret verified"
        );
    }

    #[test]
    fn a_timestamp_older_than_the_tolerance_is_rejected() {
        let now = TIMESTAMP + DEFAULT_TOLERANCE_SECS + 1;
        let result = verify(
            &secret(),
            MSG_ID,
            &TIMESTAMP.to_string(),
            SIGNATURE,
            BODY,
            now,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::TimestampTooOld),
            "a message 301 s old was not rejected as too old"
        );
    }

    #[test]
    fn a_timestamp_newer_than_the_tolerance_is_rejected() {
        let now = TIMESTAMP - DEFAULT_TOLERANCE_SECS - 1;
        let result = verify(
            &secret(),
            MSG_ID,
            &TIMESTAMP.to_string(),
            SIGNATURE,
            BODY,
            now,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::TimestampTooNew),
            "a message 301 s in the future was not rejected as too new"
        );
    }

    #[test]
    fn a_timestamp_exactly_at_the_tolerance_is_accepted_in_both_directions() {
        for now in [
            TIMESTAMP + DEFAULT_TOLERANCE_SECS,
            TIMESTAMP - DEFAULT_TOLERANCE_SECS,
        ] {
            let result = verify(
                &secret(),
                MSG_ID,
                &TIMESTAMP.to_string(),
                SIGNATURE,
                BODY,
                now,
                DEFAULT_TOLERANCE_SECS,
            );
            assert_eq!(
                result,
                Ok(()),
                "a message exactly 300 s from now={now} was rejected"
            );
        }
    }

    #[test]
    fn the_timestamp_is_checked_before_the_signature() {
        let now = TIMESTAMP + 10_000;
        let result = verify(
            &secret(),
            MSG_ID,
            &TIMESTAMP.to_string(),
            "v1,AAAA",
            BODY,
            now,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::TimestampTooOld),
            "a stale message was not reported as stale"
        );
    }

    #[test]
    fn extreme_timestamps_and_clocks_do_not_overflow_into_acceptance() {
        let max = i64::MAX.to_string();
        let result = verify(
            &secret(),
            MSG_ID,
            &max,
            SIGNATURE,
            BODY,
            i64::MIN,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::TimestampTooNew),
            "i64::MAX timestamp against i64::MIN clock was not rejected"
        );
        let result = verify(
            &secret(),
            MSG_ID,
            "0",
            SIGNATURE,
            BODY,
            i64::MAX,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Err(VerifyError::TimestampTooOld),
            "epoch timestamp against a far-future clock was not rejected"
        );
    }

    #[test]
    fn a_negative_tolerance_counts_as_zero() {
        let result = verify(
            &secret(),
            MSG_ID,
            &TIMESTAMP.to_string(),
            SIGNATURE,
            BODY,
            TIMESTAMP,
            -5,
        );
        assert_eq!(
            result,
            Ok(()),
            "a message sent exactly now was rejected under a negative tolerance"
        );
    }

    #[test]
    fn a_malformed_timestamp_is_rejected() {
        for ts in [
            "hello",
            "1614265330.0",
            "+1614265330",
            "-1614265330",
            " 1614265330",
            "1614265330 ",
            "99999999999999999999",
        ] {
            let result = verify(
                &secret(),
                MSG_ID,
                ts,
                SIGNATURE,
                BODY,
                TIMESTAMP,
                DEFAULT_TOLERANCE_SECS,
            );
            assert_eq!(
                result,
                Err(VerifyError::TimestampMalformed),
                "timestamp {ts:?} was not rejected as malformed"
            );
        }
    }

    #[test]
    fn a_timestamp_with_leading_zeros_is_read_as_the_same_number() {
        let padded = format!("00{TIMESTAMP}");
        let result = verify(
            &secret(),
            MSG_ID,
            &padded,
            SIGNATURE,
            BODY,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(
            result,
            Ok(()),
            "leading zeros changed the signed timestamp, unlike the reference libraries"
        );
    }

    #[test]
    fn missing_headers_are_rejected_by_name() {
        let ts = TIMESTAMP.to_string();
        let cases = [
            ("", ts.as_str(), SIGNATURE, "webhook-id"),
            (MSG_ID, "", SIGNATURE, "webhook-timestamp"),
            (MSG_ID, ts.as_str(), "", "webhook-signature"),
            (MSG_ID, ts.as_str(), "   ", "webhook-signature"),
        ];
        for (id, ts, sig, missing) in cases {
            let result = verify(
                &secret(),
                id,
                ts,
                sig,
                BODY,
                TIMESTAMP,
                DEFAULT_TOLERANCE_SECS,
            );
            assert_eq!(
                result,
                Err(VerifyError::MissingHeader(missing)),
                "an empty {missing} was not reported"
            );
        }
    }

    #[test]
    fn an_empty_body_can_be_signed_and_verified() {
        let s = Secret::generate();
        let header = signature_header(std::slice::from_ref(&s), MSG_ID, TIMESTAMP, b"");
        let result = verify(
            &s,
            MSG_ID,
            &TIMESTAMP.to_string(),
            &header,
            b"",
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(result, Ok(()), "an empty body did not round-trip");
    }

    #[test]
    fn a_binary_body_is_signed_byte_for_byte() {
        let s = Secret::generate();
        let body = [0u8, 0xff, 0xfe, b'.', 0x80];
        let header = sign(&s, MSG_ID, TIMESTAMP, &body);
        let result = verify(
            &s,
            MSG_ID,
            &TIMESTAMP.to_string(),
            &header,
            &body,
            TIMESTAMP,
            DEFAULT_TOLERANCE_SECS,
        );
        assert_eq!(result, Ok(()), "a non-UTF-8 body did not round-trip");
    }
}
