//! Property-based fuzzing of the parsers that face the outside, on stable
//! Rust (proptest; no nightly toolchain here). Each target runs `--cases`
//! generated inputs and fails on a panic or a broken property:
//!
//! - `url`: callback URLs (random text, and forbidden addresses in every
//!   spelling a resolver accepts) never panic the URL check, and nothing it
//!   accepts is an address an independent list forbids, or a name that a
//!   system resolver would read as an IPv4 address;
//! - `signature`: the `webhook-signature` verifier never panics and never
//!   accepts a header that lacks the true signature;
//! - `ingest`: the `POST /v1/events` body parser never panics, keeps every
//!   number's digits and never accepts a repeated key;
//! - `retry_after`: the `Retry-After` parser never panics, and reads
//!   delay-seconds exactly.
//!
//! `cargo run --release --example fuzz -- --cases 1000000` (default 10,000;
//! `--target NAME` runs one).

mod ingest;
mod retry_after;
mod signature;
mod url;

use std::time::Instant;

use proptest::test_runner::{Config, TestError, TestRunner};

/// One target: its name and how to run it with a runner.
type Target = (&'static str, fn(&mut TestRunner) -> Result<(), String>);

/// Turns a proptest outcome into a message.
pub fn outcome<T: std::fmt::Debug>(result: Result<(), TestError<T>>) -> Result<(), String> {
    result.map_err(|e| match e {
        TestError::Fail(why, input) => format!("{why}\n  smallest failing input: {input:?}"),
        TestError::Abort(why) => format!("aborted: {why}"),
    })
}

fn main() {
    let mut cases: u32 = 10_000;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cases" => {
                cases = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--cases takes a whole number");
            }
            "--target" => only = args.next(),
            other => panic!("unknown argument {other}; use --cases N and --target NAME"),
        }
    }
    let targets: [Target; 4] = [
        ("url", url::run),
        ("signature", signature::run),
        ("ingest", ingest::run),
        ("retry_after", retry_after::run),
    ];
    let mut failed = 0;
    for (name, run) in targets {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let config = Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 2_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let started = Instant::now();
        let result = run(&mut runner);
        let secs = started.elapsed().as_secs_f64();
        match result {
            Ok(()) => println!(
                "fuzz {name}: {cases} cases, no failure, {secs:.1} s ({:.1} µs/case)",
                secs * 1e6 / f64::from(cases.max(1))
            ),
            Err(why) => {
                failed += 1;
                println!("fuzz {name}: FAILED after {secs:.1} s: {why}");
            }
        }
    }
    if failed > 0 {
        std::process::exit(1);
    }
}
