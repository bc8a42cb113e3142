//! The `webhook-signature` verifier: any header, any timestamp text, any
//! body. It never panics, and it accepts only a header that carries the
//! true signature as one of its `v1,` entries.

use hookd::{
    secret::Secret,
    signing::{sign, verify},
};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

const NOW: i64 = 1_760_000_000;

fn entry() -> impl Strategy<Value = String> {
    prop_oneof![
        "v1,[A-Za-z0-9+/=]{0,60}",
        "v1a,[A-Za-z0-9+/=]{0,44}",
        "[ -~]{0,30}",
        Just("v1,".to_string()),
        Just(",".to_string()),
    ]
}

fn header() -> impl Strategy<Value = (Vec<String>, String, bool)> {
    (
        prop::collection::vec(entry(), 0..5),
        prop_oneof![Just(" "), Just("  "), Just("\t"), Just(",")],
        any::<bool>(),
    )
        .prop_map(|(entries, sep, _)| (entries, sep.to_string(), false))
        .prop_flat_map(|(entries, sep, _)| (Just(entries), Just(sep), any::<bool>()))
}

pub fn run(runner: &mut TestRunner) -> Result<(), String> {
    let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("a secret");
    let strategy = (
        header(),
        prop_oneof![
            Just(NOW.to_string()),
            "[0-9]{1,12}",
            "-?[0-9]{1,25}",
            "[ -~]{0,12}"
        ],
        prop::collection::vec(any::<u8>(), 0..64),
        "[a-zA-Z0-9_]{0,30}",
    );
    crate::outcome(runner.run(
        &strategy,
        |((entries, sep, add_true), timestamp, body, id)| {
            let truth = sign(&secret, &id, NOW, &body);
            let mut entries = entries;
            if add_true {
                entries.push(truth.clone());
            }
            let header = entries.join(&sep);
            let verified = verify(&secret, &id, &timestamp, &header, &body, NOW, 300);
            if verified.is_ok() {
                let true_sig = truth.trim_start_matches("v1,");
                prop_assert!(
                    header
                        .split_ascii_whitespace()
                        .any(|e| e == truth || e.ends_with(true_sig)),
                    "a header without the true signature verified: {header:?}"
                );
            }
            Ok(())
        },
    ))
}
