//! The `POST /v1/events` body parser: generated events (some with repeated
//! keys, long and odd numbers, deep nesting), and the same bytes cut and
//! flipped. It never panics; what it accepts stores `data` byte for byte as
//! sent (every number, exponent and escape) and never held a repeated key.

use hookd::{config::Config, http::ingest::parse};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

/// A JSON number as text, including ones no f64 holds.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        "-?[1-9][0-9]{0,300}",
        "-?(0|[1-9][0-9]{0,5})\\.[0-9]{1,40}([eE][+-]?[0-9]{1,4})?",
    ]
}

/// A JSON value as text, perhaps with a key given twice.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        number(),
        "\"[ -~]{0,12}\"".prop_map(|s| s.replace('\\', "\\\\")),
        Just("true".to_string()),
        Just("null".to_string()),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(","))),
            (prop::collection::vec(("[a-d]{1,2}", inner), 0..6)).prop_map(|fields| {
                let body: Vec<String> =
                    fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

fn event() -> impl Strategy<Value = String> {
    (value(), any::<bool>(), number()).prop_map(|(data, twice, n)| {
        let data = format!("{{\"n\":{n},\"v\":{data}}}");
        let repeat = if twice { ",\"type\":\"a.c\"" } else { "" };
        format!("{{\"type\":\"a.b\",\"partner_id\":\"p_1\",\"data\":{data}{repeat}}}")
    })
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    let events = prop::collection::vec(event(), 1..4).prop_map(|e| format!("[{}]", e.join(",")));
    let text = prop_oneof![event(), events];
    (text, any::<u16>(), any::<u8>(), 0u8..4).prop_map(|(text, at, byte, how)| {
        let mut bytes = text.into_bytes();
        let at = usize::from(at) % bytes.len().max(1);
        match how {
            0 => bytes.truncate(at),
            1 => bytes[at] = byte,
            _ => {}
        }
        bytes
    })
}

pub fn run(runner: &mut TestRunner) -> Result<(), String> {
    let limits = Config::defaults().ingest;
    // Lenient: the fuzzed type `a.b` is not in the catalog; the point here is
    // that what is accepted is kept byte for byte.
    let catalog = hookd::catalog::Catalog::bundled().with_strict(false);
    crate::outcome(runner.run(&body(), |bytes| {
        if let Ok((events, _)) = parse(&bytes, 0, &limits, &catalog) {
            let text = String::from_utf8_lossy(&bytes);
            for e in &events {
                hookd::domain::strict_json::check(e.payload.as_bytes()).map_err(|e| {
                    TestCaseError::fail(format!("a stored payload is not strict: {e}"))
                })?;
                prop_assert!(
                    text.contains(&format!("\"data\":{}", e.payload)),
                    "data was not kept as sent: {}",
                    e.payload
                );
            }
        }
        Ok(())
    }))
}
