//! Fixed vectors: the signature the spec publishes, and the headers built from it.

use super::*;

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
    let header = signature_header(&[SigningKey::Hmac(secret())], MSG_ID, TIMESTAMP, BODY);
    assert_eq!(
        header, SIGNATURE,
        "single-secret header is not exactly the one signature"
    );
}

#[test]
fn a_header_for_several_secrets_lists_one_signature_each_in_order() {
    let other = Secret::generate();
    let header = signature_header(
        &[SigningKey::Hmac(secret()), SigningKey::Hmac(other.clone())],
        MSG_ID,
        TIMESTAMP,
        BODY,
    );
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

/// Signs `body` as the reference message and checks the result against
/// `expected` both ways: the signer makes it, and the verifier accepts it.
fn signs_to(body: &[u8], expected: &str, what: &str) {
    assert_eq!(
        sign(&secret(), MSG_ID, TIMESTAMP, body),
        expected,
        "{what}: the signature differs from the one computed outside hookd"
    );
    let verified = verify(
        &secret(),
        MSG_ID,
        &TIMESTAMP.to_string(),
        expected,
        body,
        TIMESTAMP,
        DEFAULT_TOLERANCE_SECS,
    );
    assert_eq!(
        verified,
        Ok(()),
        "{what}: the signature computed outside hookd was rejected"
    );
}

#[test]
fn an_empty_body_signs_to_the_independently_computed_signature() {
    // python3 -c "import hmac,hashlib,base64; print(base64.b64encode(hmac.new(base64.b64decode('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), b'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.', hashlib.sha256).digest()).decode())"
    signs_to(
        b"",
        "v1,v48jdbgvh29KJz2Qc+ghw8G6vG3nAKnujWBg8oM/62A=",
        "an empty body",
    );
}

#[test]
fn a_binary_body_signs_byte_for_byte_to_the_independently_computed_signature() {
    // python3 -c "import hmac,hashlib,base64; print(base64.b64encode(hmac.new(base64.b64decode('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), b'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.\x00\xff\xfe.\x80', hashlib.sha256).digest()).decode())"
    signs_to(
        &[0x00, 0xff, 0xfe, b'.', 0x80],
        "v1,duQR/FS1BD20u4joFLuGXnGtuO/AC466CyV0j0spZ0o=",
        "a non-UTF-8 body",
    );
}
