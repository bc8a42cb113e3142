//! One endpoint reads the same on every page, in a real browser: an
//! endpoint that fails with its circuit open is `failing` with an `open`
//! circuit and the same failures on the overview's table, its cards, the
//! endpoints list and its own page; once the open period has passed, every
//! page says half open, the next request being the probe.

use std::time::Duration;

use serde_json::json;

use super::{open, signed_in, texts};
use crate::harness::{
    TestApp, WAIT,
    browser::Page,
    receiver::{Receiver, Reply},
    spawn_app_with, wait_until,
};

/// What a page shows of one endpoint: its status, its circuit's badge, the
/// instant in the circuit's text (until when, or since when), and its
/// consecutive failures.
#[derive(Debug, PartialEq, Eq)]
struct Shown {
    status: String,
    circuit: String,
    instant: Vec<String>,
    failures: String,
}

/// [`Shown`] read from the elements `status`, `circuit` (holding the badge
/// and its times) and `failures` of the page open now.
async fn shown(page: &mut Page, status: &str, circuit: &str, failures: &str) -> Shown {
    let js = format!(
        "[...document.querySelectorAll({})].map(e => e.getAttribute('datetime'))",
        json!(format!("{circuit} time"))
    );
    let instant = page.eval(&js).await;
    let one = |mut v: Vec<String>, what: &str| {
        assert_eq!(v.len(), 1, "one {what}: {v:?}");
        v.remove(0)
    };
    Shown {
        status: one(texts(page, status).await, status),
        circuit: one(texts(page, &format!("{circuit} .circuit")).await, circuit),
        instant: serde_json::from_value(instant).expect("a list of times"),
        failures: one(texts(page, failures).await, failures),
    }
}

/// The endpoint `ep` as the overview's table, the endpoints list and its
/// own page show it, in that order.
async fn on_every_page(page: &mut Page, app: &TestApp, ep: &str) -> [Shown; 3] {
    let row = format!("#endpoints tr[data-endpoint={}]", json!(ep));
    let in_row = |what: &str| format!("{row} {what}");
    let mut out = Vec::new();
    for path in ["/dashboard", "/dashboard/endpoints"] {
        open(page, app, path).await;
        let (s, c, f) = (
            in_row(".status"),
            in_row(".circuit-cell"),
            in_row(".failures"),
        );
        out.push(shown(page, &s, &c, &f).await);
    }
    open(page, app, &format!("/dashboard/endpoints/{ep}")).await;
    out.push(
        shown(
            page,
            "#status .status",
            "#circuit-shown",
            "#circuit-shown .failures",
        )
        .await,
    );
    out.try_into().expect("three pages")
}

browser_test!(
    an_endpoint_with_an_open_circuit_and_failures_reads_the_same_on_every_page,
    |backend: Backend| async move {
        let app = spawn_app_with(
            backend,
            &[
                ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "2"),
                ("HOOKD_CIRCUIT__COOLDOWN_INITIAL", "30s"),
                ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1h"]"#),
                ("HOOKD_DELIVERY__JITTER", "0"),
            ],
        )
        .await;
        let operator = app.operator_key().await;
        let receiver = Receiver::start().await;
        receiver.set_default(Reply::status(500));
        let (ep, _) = app.endpoint(&receiver.url()).await;
        for n in 0..2 {
            let event = app.publish("x.one", json!({ "n": n })).await;
            app.wait_for_state(&event, &ep, "failed", WAIT).await;
        }
        let saved_open = || async {
            let sql = "SELECT COUNT(*) AS n FROM endpoint WHERE circuit_open_until IS NOT NULL \
                       AND circuit_failures >= 2 AND failing_since IS NOT NULL";
            (app.count(sql).await == 1).then_some(())
        };
        wait_until(WAIT, saved_open)
            .await
            .expect("the open circuit and its failures are saved");

        let (_browser, mut page) = signed_in(&app, &operator).await;
        let [overview, list, own] = on_every_page(&mut page, &app, &ep).await;
        assert_eq!(overview.status, "failing", "{overview:?}");
        assert_eq!(overview.circuit, "open", "{overview:?}");
        assert_eq!(overview.instant.len(), 1, "open until: {overview:?}");
        assert_ne!(overview.failures, "0", "{overview:?}");
        assert_eq!(
            list, overview,
            "the endpoints list says what the overview says"
        );
        assert_eq!(own, overview, "its page says what the overview says");
        open(&mut page, &app, "/dashboard").await;
        assert_eq!(texts(&mut page, "#endpoints-failing b").await, ["1"]);
        assert_eq!(texts(&mut page, "#endpoints-active b").await, ["0"]);

        // Past the open period, nothing was sent (the next retry is an
        // hour away): the row and the actor still hold "open until" a
        // time gone by, and every page reads half open.
        app.advance(Duration::from_secs(44));
        let [overview, list, own] = on_every_page(&mut page, &app, &ep).await;
        assert_eq!(overview.circuit, "half open", "{overview:?}");
        assert_eq!(overview.status, "failing");
        assert_eq!(
            list, overview,
            "the endpoints list says what the overview says"
        );
        assert_eq!(own, overview, "its page says what the overview says");
        let probe = texts(&mut page, "#circuit-shown .probe").await;
        assert_eq!(probe, [": the next request is a probe"]);
        let lag = texts(&mut page, "#circuit-stored").await;
        assert!(lag.is_empty(), "nothing to explain: {lag:?}");
    }
);
