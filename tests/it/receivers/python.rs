//! The Python receiver (`examples/receivers/python/`): every scenario, and its
//! reconciler against a live hookd's feed.
//!
//! Its venv lives in the user's cache (`~/.cache/hookd-ci/receivers/`), made
//! once per `requirements.txt` and Python version by `harness::python`.
//! Without Python the tests skip loudly, and fail under `CI=true`.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
    sync::OnceLock,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{ReceiverUnderTest, Toolchain, bed::Bed};
use crate::{harness::wait_until, receiver_scenarios};

pub static PYTHON: ReceiverUnderTest =
    ReceiverUnderTest::sqlite("the Python receiver", python_toolchain);

receiver_scenarios!(PYTHON);

pub(super) fn example_dir() -> PathBuf {
    super::example_dir("python")
}

fn python_toolchain() -> Toolchain {
    static READY: OnceLock<Toolchain> = OnceLock::new();
    Toolchain::once(&READY, || {
        Ok(Toolchain::Ready {
            program: venv()?,
            args: vec![example_dir().join("receiver.py").display().to_string()],
            env: vec![
                ("PYTHONUNBUFFERED".into(), "1".into()),
                ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ],
        })
    })
}

/// The venv's interpreter, made if needed; `Err` says what is missing.
pub(super) fn venv() -> Result<PathBuf, String> {
    crate::harness::python::venv("receivers", &example_dir().join("requirements.txt"))
}

/// Runs `reconcile.py` against `bed`'s hookd and inbox; returns its summary.
async fn reconcile(bed: &Bed) -> Value {
    let Toolchain::Ready { program, env, .. } = bed.receiver.toolchain() else {
        unreachable!("the bed started, so its toolchain is ready")
    };
    let out_path = bed.receiver.dir().join("reconcile.out");
    let err_path = bed.receiver.dir().join("reconcile.err");
    let mut child = Command::new(program)
        .arg(example_dir().join("reconcile.py"))
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env("HOOKD_URL", &bed.app.base_url)
        .env("HOOKD_PARTNER_KEY", &bed.key)
        .env("INBOX_DB", bed.receiver.inbox_path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("a stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("a stderr file"))
        .spawn()
        .expect("reconcile.py starts");
    // Polled, not waited on: hookd answers the feed from this test's runtime.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("the reconciler's status") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "reconcile.py did not finish in 30 s"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    };
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(
        status.success(),
        "reconcile.py failed ({status}):\n{out}{err}"
    );
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("a JSON summary ({e}): {out}"))
}

fn usage(usage_id: &str) -> Value {
    json!({
        "type": "usage.finalized", "schema_version": 1,
        "data": {"customer_id": "cus_204", "currency": "USD", "final_cost": "0.500000", "usage_id": usage_id},
    })
}

/// The guide's reconciler (docs/receiving.md): what the webhooks missed
/// during an outage comes from the feed, once; what they brought is not
/// applied again, nor are hookd's retries once the receiver is back; a second
/// run reads nothing.
#[hookd_test_macros::test]
async fn the_reconciler_applies_what_the_webhooks_missed_and_a_second_run_reads_nothing() {
    let Some(mut bed) = Bed::start(&PYTHON).await else {
        return;
    };
    let (by_webhook, _) = bed.deliver(usage("usage_hook")).await;
    // An outage: the next events are not delivered.
    bed.receiver.stop();
    let missed = [
        bed.publish(usage("usage_missed_1")).await,
        bed.publish(usage("usage_missed_2")).await,
    ];
    for id in &missed {
        let first = bed.attempts(id, 1).await.remove(0);
        assert_eq!(
            first.0, None,
            "nothing answers during the outage: {first:?}"
        );
    }
    feed_holds(&bed, 3).await;

    let first = reconcile(&bed).await;
    assert_eq!(
        (&first["read"], &first["new"], &first["applied"]),
        (&json!(3), &json!(2), &json!(2)),
        "the whole feed is read; the 2 events the webhooks missed are new: {first}"
    );
    let snapshot = bed.receiver.snapshot().await;
    for id in missed.iter().chain([&by_webhook]) {
        let rows = snapshot.received(id);
        assert_eq!(rows.len(), 1, "{id} is in the inbox once: {snapshot:#?}");
        assert_eq!(
            (rows[0].status.as_str(), rows[0].received_count),
            ("applied", 1)
        );
    }
    for usage_id in ["usage_hook", "usage_missed_1", "usage_missed_2"] {
        assert_eq!(snapshot.booked("usage", usage_id).len(), 1, "{usage_id}");
    }

    let second = reconcile(&bed).await;
    assert_eq!(
        (&second["read"], &second["new"], &second["cursor"]),
        (&json!(0), &json!(0), &first["cursor"]),
        "a second run starts from the stored cursor and reads nothing: {second}"
    );
    let later = bed.publish(usage("usage_later")).await;
    feed_holds(&bed, 4).await;
    let third = reconcile(&bed).await;
    assert_eq!(
        (&third["read"], &third["new"]),
        (&json!(1), &json!(1)),
        "{third}"
    );

    // The receiver is back and hookd's retries arrive: duplicates now.
    bed.receiver.start(&[&bed.secret]).await;
    bed.app.advance(Duration::from_secs(7));
    for id in missed.iter().chain([&later]) {
        bed.delivered(id).await;
    }
    let snapshot = bed.receiver.snapshot().await;
    for id in missed.iter().chain([&later]) {
        let rows = snapshot.received(id);
        assert_eq!(
            (rows.len(), rows[0].received_count),
            (1, 2),
            "{id}: one row, received from the feed and then by webhook: {snapshot:#?}"
        );
    }
    for usage_id in ["usage_missed_1", "usage_missed_2", "usage_later"] {
        assert_eq!(
            snapshot.booked("usage", usage_id).len(),
            1,
            "{usage_id} booked once"
        );
    }
    crate::harness::quiesce().await;
}

/// Waits until the partner's feed lists `n` events (positions are assigned
/// when the events are fanned out).
async fn feed_holds(bed: &Bed, n: usize) {
    let listed = wait_until(Duration::from_secs(20), || async {
        let (_, feed, _) = bed.app.request("GET", "/v1/events", &bed.key, None).await;
        let len = feed["data"].as_array().map_or(0, Vec::len);
        (len >= n).then_some(len)
    })
    .await;
    assert_eq!(listed, Some(n), "the feed lists {n} events");
}
