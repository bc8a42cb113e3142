//! The timestamp: its tolerance in both directions, its format, and arithmetic that cannot overflow.

use super::*;

#[test]
fn a_timestamp_older_than_the_tolerance_is_rejected() {
    let now = TIMESTAMP + DEFAULT_TOLERANCE_SECS + 1;
    let result = check_with(&secret(), &TIMESTAMP.to_string(), SIGNATURE, now);
    assert_eq!(
        result,
        Err(VerifyError::TimestampTooOld),
        "a message 301 s old was not rejected as too old"
    );
}

#[test]
fn a_timestamp_newer_than_the_tolerance_is_rejected() {
    let now = TIMESTAMP - DEFAULT_TOLERANCE_SECS - 1;
    let result = check_with(&secret(), &TIMESTAMP.to_string(), SIGNATURE, now);
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
        let result = check_with(&secret(), &TIMESTAMP.to_string(), SIGNATURE, now);
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
    let result = check_with(&secret(), &TIMESTAMP.to_string(), "v1,AAAA", now);
    assert_eq!(
        result,
        Err(VerifyError::TimestampTooOld),
        "a stale message was not reported as stale"
    );
}

#[test]
fn extreme_timestamps_and_clocks_do_not_overflow_into_acceptance() {
    let max = i64::MAX.to_string();
    let result = check_with(&secret(), &max, SIGNATURE, i64::MIN);
    assert_eq!(
        result,
        Err(VerifyError::TimestampTooNew),
        "i64::MAX timestamp against i64::MIN clock was not rejected"
    );
    let result = check_with(&secret(), "0", SIGNATURE, i64::MAX);
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
        let result = check_with(&secret(), ts, SIGNATURE, TIMESTAMP);
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
    let result = check_with(&secret(), &padded, SIGNATURE, TIMESTAMP);
    assert_eq!(
        result,
        Ok(()),
        "leading zeros changed the signed timestamp, unlike the reference libraries"
    );
}
