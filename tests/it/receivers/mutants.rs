//! The receiver scenarios can fail: a copy of the Python receiver with its
//! duplicate guards taken out (no unique `webhook-id`, no unique ledger
//! source) is caught by the duplicate scenario, through its inbox; a copy
//! that does not validate `data` is caught by the schema scenario.

use std::{
    panic::AssertUnwindSafe,
    path::{Path, PathBuf},
    sync::OnceLock,
};

use futures_util::FutureExt as _;

use super::{ReceiverUnderTest, Toolchain, python, scenarios};

/// The Python receiver, but it stores and applies every arrival of an event.
static APPLIES_DUPLICATES: ReceiverUnderTest = ReceiverUnderTest::sqlite(
    "a Python receiver without duplicate guards",
    applies_duplicates,
);

/// `(what, replacement)` edits to `inbox.py`; each must match exactly once.
const DROP_DUPLICATE_GUARDS: [(&str, &str); 4] = [
    (
        "webhook_id     TEXT NOT NULL UNIQUE,",
        "webhook_id     TEXT NOT NULL,",
    ),
    (" ON CONFLICT (webhook_id) DO NOTHING", ""),
    (
        "    PRIMARY KEY (kind, source_id)\n",
        "    extra       TEXT\n",
    ),
    (" ON CONFLICT (kind, source_id) DO NOTHING", ""),
];

fn applies_duplicates() -> Toolchain {
    static READY: OnceLock<Toolchain> = OnceLock::new();
    Toolchain::once(&READY, || {
        Ok(Toolchain::Ready {
            program: python::venv()?,
            args: vec![mutant_copy().join("receiver.py").display().to_string()],
            env: vec![("PYTHONDONTWRITEBYTECODE".into(), "1".into())],
        })
    })
}

/// The Python receiver, but it stores `data` without validating it.
static SKIPS_VALIDATION: ReceiverUnderTest = ReceiverUnderTest::sqlite(
    "a Python receiver that does not validate data",
    skips_validation,
);

fn skips_validation() -> Toolchain {
    static READY: OnceLock<Toolchain> = OnceLock::new();
    Toolchain::once(&READY, || {
        let receiver = example_copy("no-validation").join("receiver.py");
        let source = std::fs::read_to_string(&receiver).expect("receiver.py");
        let call = "            validate(self.config.schemas, event)\n";
        assert_eq!(
            source.matches(call).count(),
            1,
            "the mutation no longer matches receiver.py: update skips_validation"
        );
        write(&receiver, &source.replace(call, ""));
        Ok(Toolchain::Ready {
            program: python::venv()?,
            args: vec![receiver.display().to_string()],
            env: vec![("PYTHONDONTWRITEBYTECODE".into(), "1".into())],
        })
    })
}

/// A copy of the Python example's sources in this process's temp dir.
fn example_copy(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "hookd-mutant-receiver-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("the mutant's dir");
    let example = python::example_dir();
    for file in ["receiver.py", "inbox.py", "schema.py"] {
        std::fs::copy(example.join(file), dir.join(file)).expect("the example's sources");
    }
    dir
}

/// A copy of the Python example with [`DROP_DUPLICATE_GUARDS`] applied.
fn mutant_copy() -> PathBuf {
    let dir = example_copy("duplicates");
    let inbox = dir.join("inbox.py");
    let mut source = std::fs::read_to_string(&inbox).expect("inbox.py");
    for (what, replacement) in DROP_DUPLICATE_GUARDS {
        assert_eq!(
            source.matches(what).count(),
            1,
            "the mutation `{what}` no longer matches inbox.py: update DROP_DUPLICATE_GUARDS"
        );
        source = source.replace(what, replacement);
    }
    write(&inbox, &source);
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("the mutant's source");
}

#[hookd_test_macros::test]
async fn a_receiver_that_applies_duplicates_fails_the_duplicate_scenario_on_its_inbox() {
    let outcome = AssertUnwindSafe(
        scenarios::a_replayed_event_is_acknowledged_and_not_applied_again(&APPLIES_DUPLICATES),
    )
    .catch_unwind()
    .await;
    crate::harness::quiesce().await;
    let Err(panic) = outcome else {
        if super::ready(&APPLIES_DUPLICATES).is_none() {
            return; // skipped loudly (a failure under CI=true)
        }
        panic!("a receiver that stores and applies every duplicate passed the duplicate scenario");
    };
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(
        message.contains("one inbox row per webhook-id"),
        "caught by its inbox, not by something else: {message}"
    );
}

#[hookd_test_macros::test]
async fn a_receiver_that_does_not_validate_data_fails_the_schema_scenario() {
    let outcome = AssertUnwindSafe(
        scenarios::data_that_does_not_match_the_published_schema_is_refused_with_422(
            &SKIPS_VALIDATION,
        ),
    )
    .catch_unwind()
    .await;
    crate::harness::quiesce().await;
    let Err(panic) = outcome else {
        if super::ready(&SKIPS_VALIDATION).is_none() {
            return; // skipped loudly (a failure under CI=true)
        }
        panic!("a receiver that takes any data passed the schema scenario");
    };
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    assert!(
        message.contains("an undeclared field"),
        "caught on the undeclared field, not by something else: {message}"
    );
}
