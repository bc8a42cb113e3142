//! How the `webhook-signature` header is read: several entries, unknown versions, malformed or partial ones, missing headers.

use super::*;

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
