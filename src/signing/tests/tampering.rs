//! A change to any signed part (body, id, timestamp) or the wrong secret is rejected.

use super::*;

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
    let result = check_with(&secret(), &shifted.to_string(), SIGNATURE, TIMESTAMP);
    assert_eq!(
        result,
        Err(VerifyError::NoMatchingSignature),
        "a changed webhook-timestamp was accepted"
    );
}

#[test]
fn a_signature_from_the_wrong_secret_is_rejected() {
    let wrong = Secret::generate();
    let result = check_with(&wrong, &TIMESTAMP.to_string(), SIGNATURE, TIMESTAMP);
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
    let after_rotation =
        signature_header(&[SigningKey::Hmac(new.clone())], MSG_ID, TIMESTAMP, BODY);
    let as_old_receiver = check_with(&old, &TIMESTAMP.to_string(), &after_rotation, TIMESTAMP);
    assert_eq!(
        as_old_receiver,
        Err(VerifyError::NoMatchingSignature),
        "the retired secret still verified"
    );
    let old_signature = sign(&old, MSG_ID, TIMESTAMP, BODY);
    let as_new_receiver = check_with(&new, &TIMESTAMP.to_string(), &old_signature, TIMESTAMP);
    assert_eq!(
        as_new_receiver,
        Err(VerifyError::NoMatchingSignature),
        "a signature by the retired secret verified"
    );
}
