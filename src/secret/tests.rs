//! The secrets' unit tests: parsing, sealing and opening.

use super::*;

const PASSPHRASE: &str = "correct horse battery staple, but long enough";
const OTHER_PASSPHRASE: &str = "an entirely different operator passphrase!";

fn sealer() -> SecretBox {
    SecretBox::from_passphrase(PASSPHRASE).expect("a 45-character passphrase should be accepted")
}

#[test]
fn a_generated_secret_survives_expose_and_parse() {
    let secret = Secret::generate();
    let shown = secret.expose();
    assert!(
        shown.starts_with("whsec_"),
        "exposed secret {shown:?} lacks the whsec_ prefix"
    );
    let parsed = Secret::parse(&shown).expect("an exposed secret should parse back");
    assert_eq!(
        parsed.key(),
        secret.key(),
        "parsing the exposed secret changed the key"
    );
}

#[test]
fn a_generated_secret_is_32_random_bytes() {
    let a = Secret::generate();
    let b = Secret::generate();
    assert_eq!(a.key().len(), 32, "generated key has the wrong length");
    assert_ne!(a.key(), b.key(), "two generated secrets were identical");
}

#[test]
fn the_standard_webhooks_reference_secret_parses_to_24_bytes() {
    let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        .expect("the Standard Webhooks reference secret should parse");
    assert_eq!(
        secret.key().len(),
        24,
        "reference secret decoded to the wrong length"
    );
    assert_eq!(
        secret.expose(),
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "exposing did not reproduce the original string"
    );
}

#[test]
fn a_secret_without_the_whsec_prefix_is_rejected() {
    let err = Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_err();
    assert_eq!(
        err,
        SecretError::MissingPrefix,
        "wrong error for a missing prefix"
    );
    assert!(
        err.to_string().contains("whsec_"),
        "error {err} does not name the prefix"
    );
}

#[test]
fn a_secret_with_bad_base64_is_rejected() {
    for bad in [
        "whsec_not*base64!",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw==",
    ] {
        assert_eq!(
            Secret::parse(bad).unwrap_err(),
            SecretError::InvalidBase64,
            "{bad:?} was not reported as bad base64"
        );
    }
}

#[test]
fn an_empty_secret_is_rejected_as_too_short() {
    assert_eq!(
        Secret::parse("whsec_").unwrap_err(),
        SecretError::InvalidLength { len: 0 },
        "an empty key was not rejected"
    );
}

#[test]
fn a_secret_shorter_than_24_bytes_is_rejected() {
    let short = format!("whsec_{}", STANDARD.encode([7u8; 23]));
    assert_eq!(
        Secret::parse(&short).unwrap_err(),
        SecretError::InvalidLength { len: 23 },
        "a 23-byte key was not rejected as too short"
    );
}

#[test]
fn a_secret_longer_than_64_bytes_is_rejected() {
    let long = format!("whsec_{}", STANDARD.encode([7u8; 65]));
    assert_eq!(
        Secret::parse(&long).unwrap_err(),
        SecretError::InvalidLength { len: 65 },
        "a 65-byte key was not rejected as too long"
    );
    let max = format!("whsec_{}", STANDARD.encode([7u8; 64]));
    assert!(
        Secret::parse(&max).is_ok(),
        "a 64-byte key was wrongly rejected"
    );
}

#[test]
fn a_sealed_secret_opens_for_the_same_endpoint() {
    let secret = Secret::generate();
    let sealed = sealer().seal("ep_1", &secret);
    assert!(
        sealed.starts_with("v1."),
        "sealed value {sealed:?} lacks the v1. tag"
    );
    let opened = sealer()
        .open("ep_1", &sealed)
        .expect("sealed secret should open");
    assert_eq!(
        opened.key(),
        secret.key(),
        "opened secret differs from the sealed one"
    );
}

#[test]
fn a_sealed_secret_is_url_safe_text_of_the_expected_length() {
    let sealed = sealer().seal("ep_1", &Secret::generate());
    let body = &sealed["v1.".len()..];
    assert!(
        body.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "sealed body {body:?} is not base64url without padding"
    );
    // 12-byte nonce + 32-byte key + 16-byte tag = 60 bytes = 80 base64 characters.
    assert_eq!(body.len(), 80, "sealed body has an unexpected length");
}

#[test]
fn a_value_sealed_by_an_earlier_build_still_opens() {
    // Pins the HKDF salt/info, cipher and text format: if any of them changes,
    // every secret already stored in a database becomes unreadable.
    let sealed = "v1.Ke2R0NaYa4LkqVStpCxv6xyzGaWdKjgrBSu25ijucZtDMdJd3-H0vi8SjO5Ihyx4g87QZg";
    let opened = sealer()
        .open("ep_1", sealed)
        .expect("a value sealed with the v1 format should still open");
    assert_eq!(
        opened.expose(),
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "the pinned sealed value opened to the wrong secret"
    );
}

#[test]
fn a_sealed_secret_does_not_open_for_another_endpoint() {
    let sealed = sealer().seal("ep_1", &Secret::generate());
    assert_eq!(
        sealer().open("ep_2", &sealed).unwrap_err(),
        SecretError::SealedAuthenticationFailed,
        "a ciphertext moved to another endpoint's row was accepted"
    );
}

#[test]
fn a_sealed_secret_does_not_open_under_another_passphrase() {
    let sealed = sealer().seal("ep_1", &Secret::generate());
    let other =
        SecretBox::from_passphrase(OTHER_PASSPHRASE).expect("passphrase should be accepted");
    assert_eq!(
        other.open("ep_1", &sealed).unwrap_err(),
        SecretError::SealedAuthenticationFailed,
        "a secret opened under the wrong passphrase"
    );
}

#[test]
fn a_tampered_ciphertext_does_not_open() {
    let sealed = sealer().seal("ep_1", &Secret::generate());
    let mut bytes = URL_SAFE_NO_PAD
        .decode(&sealed[3..])
        .expect("sealed body should decode");
    for i in [0, NONCE_BYTES, bytes.len() - 1] {
        bytes[i] ^= 0x01;
        let tampered = format!("v1.{}", URL_SAFE_NO_PAD.encode(&bytes));
        assert_eq!(
            sealer().open("ep_1", &tampered).unwrap_err(),
            SecretError::SealedAuthenticationFailed,
            "flipping a bit at byte {i} went unnoticed"
        );
        bytes[i] ^= 0x01;
    }
}

#[test]
fn two_seals_of_the_same_secret_differ() {
    let secret = Secret::generate();
    let a = sealer().seal("ep_1", &secret);
    let b = sealer().seal("ep_1", &secret);
    assert_ne!(
        a, b,
        "sealing twice gave the same output, so the nonce is not random"
    );
}

#[test]
fn a_sealed_value_with_a_bad_format_is_reported_as_malformed_not_as_tampered() {
    let b = sealer();
    assert_eq!(
        b.open("ep_1", "v2.AAAA").unwrap_err(),
        SecretError::SealedVersionUnknown,
        "an unknown version tag was not reported as such"
    );
    assert_eq!(
        b.open("ep_1", "").unwrap_err(),
        SecretError::SealedVersionUnknown,
        "an empty value was not reported as lacking the version tag"
    );
    assert!(
        matches!(
            b.open("ep_1", "v1.not base64!").unwrap_err(),
            SecretError::SealedMalformed(_)
        ),
        "invalid base64url was not reported as malformed"
    );
    assert!(
        matches!(
            b.open("ep_1", &format!("v1.{}", URL_SAFE_NO_PAD.encode([0u8; 27])))
                .unwrap_err(),
            SecretError::SealedMalformed(_)
        ),
        "a value too short for nonce and tag was not reported as malformed"
    );
}

#[test]
fn a_passphrase_shorter_than_32_characters_is_rejected() {
    let err = SecretBox::from_passphrase(&"x".repeat(31)).unwrap_err();
    assert_eq!(
        err,
        SecretError::PassphraseTooShort { chars: 31 },
        "31 characters were accepted"
    );
    assert!(
        err.to_string().contains("32"),
        "error {err} does not state the minimum"
    );
    assert!(
        SecretBox::from_passphrase(&"x".repeat(32)).is_ok(),
        "exactly 32 characters were rejected"
    );
}

#[test]
fn a_passphrase_is_measured_in_characters_not_bytes() {
    // 16 two-byte characters: 32 bytes but only 16 characters of passphrase.
    let err = SecretBox::from_passphrase(&"é".repeat(16)).unwrap_err();
    assert_eq!(
        err,
        SecretError::PassphraseTooShort { chars: 16 },
        "multi-byte characters were counted as bytes"
    );
}

#[test]
fn a_generated_passphrase_is_44_characters_and_accepted() {
    let p = generate_passphrase();
    assert_eq!(
        p.len(),
        44,
        "generated passphrase {p:?} is not 44 characters"
    );
    assert_eq!(
        STANDARD.decode(&p).map(|b| b.len()),
        Ok(32),
        "passphrase is not base64 of 32 bytes"
    );
    assert_ne!(
        p,
        generate_passphrase(),
        "two generated passphrases were identical"
    );
    assert!(
        SecretBox::from_passphrase(&p).is_ok(),
        "a generated passphrase was rejected"
    );
}

#[test]
fn debug_output_contains_no_key_material() {
    let secret = Secret::generate();
    let exposed = secret.expose();
    let encoded = &exposed["whsec_".len()..];
    let printed = format!("{secret:?} {:?}", vec![secret.clone()]);
    assert_eq!(
        format!("{secret:?}"),
        "Secret(whsec_…)",
        "Secret's Debug format changed"
    );
    assert!(
        !printed.contains(encoded),
        "Debug output {printed:?} leaks the key"
    );
    assert!(
        !printed.contains(&format!("{:?}", secret.key())),
        "Debug output {printed:?} leaks the raw key bytes"
    );
    let boxed = format!("{:?}", sealer());
    assert_eq!(
        boxed, "SecretBox(…)",
        "SecretBox's Debug output {boxed:?} may leak the key"
    );
}
