//! Logs an on-call engineer can read: a failing receiver gives exactly the
//! lines named (its first failure after a success, the circuit opening, the
//! delivery going dead, the endpoint marked failing, its recovery; a 410
//! disables it), a flood of `blocked` attempts gives one line and then a
//! count, and no line carries a URL's path or query or a body. Captured in
//! process (the engine on a manual clock; lines told apart by endpoint id,
//! so tests running beside each other do not mix).

use std::{
    collections::BTreeMap,
    sync::{Mutex, OnceLock},
    time::Duration,
};

use serde_json::json;
use tracing::{Level, field::Field};
use tracing_subscriber::{Layer as _, filter::Targets, layer::SubscriberExt as _};

use crate::harness::{
    Backend, QUIET, SLOW, TestApp,
    receiver::{Receiver, Reply},
    spawn_app_with, stays_quiet, wait_until,
};
use hookd_test_macros::both_backends;

/// One line as the test captured it.
#[derive(Debug, Clone)]
pub struct Said {
    pub level: Level,
    pub message: String,
    pub fields: BTreeMap<String, String>,
}

impl Said {
    fn field(&self, name: &str) -> &str {
        self.fields.get(name).map_or("", String::as_str)
    }
}

static SAID: Mutex<Vec<Said>> = Mutex::new(Vec::new());

/// Captures the delivery engine's on-call lines for the rest of the process.
fn listen() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let targets = Targets::new()
            .with_target("hookd::delivery::oncall", Level::INFO)
            .with_target("hookd::delivery::egress_audit", Level::INFO);
        let subscriber = tracing_subscriber::registry().with(Capture.with_filter(targets));
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other test installs a global tracing subscriber");
    });
}

struct Capture;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut fields = Fields(BTreeMap::new());
        event.record(&mut fields);
        let mut fields = fields.0;
        let said = Said {
            level: *event.metadata().level(),
            message: fields.remove("message").unwrap_or_default(),
            fields,
        };
        SAID.lock().unwrap_or_else(|p| p.into_inner()).push(said);
    }
}

struct Fields(BTreeMap<String, String>);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
}

/// Every line captured so far (any test's).
fn everything() -> Vec<Said> {
    SAID.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The lines about `endpoint`, in the order they were said.
pub fn about(endpoint: &str) -> Vec<Said> {
    everything()
        .into_iter()
        .filter(|s| s.field("endpoint") == endpoint)
        .collect()
}

/// Waits until `n` lines were said about `endpoint`.
async fn lines(endpoint: &str, n: usize) -> Vec<Said> {
    wait_until(SLOW, || async {
        let said = about(endpoint);
        (said.len() >= n).then_some(said)
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "{n} lines about {endpoint} within {SLOW:?}:\n{:#?}",
            about(endpoint)
        )
    })
}

/// Each line's level and the head of its message (up to a `:` or `;`).
fn shape(said: &[Said]) -> Vec<(Level, String)> {
    said.iter()
        .map(|s| {
            let head = s.message.split([':', ';']).next().unwrap_or_default();
            (s.level, head.to_string())
        })
        .collect()
}

fn expect(said: &[Said], expected: &[(Level, &str)]) {
    let expected: Vec<(Level, String)> =
        expected.iter().map(|(l, m)| (*l, m.to_string())).collect();
    assert_eq!(shape(said), expected, "the lines said:\n{said:#?}");
}

/// No line about `endpoint` shows `secret` (a URL's query, a body).
fn nowhere(endpoint: &str, secret: &str) {
    for s in about(endpoint) {
        let text = format!("{} {:?}", s.message, s.fields);
        assert!(!text.contains(secret), "a line shows {secret:?}: {s:#?}");
    }
}

fn advance(app: &TestApp, secs: u64) {
    app.advance(Duration::from_secs(secs));
}

/// Three attempts (0 s, 10 s, 20 s apart), a circuit that opens after two
/// failures for 5 s, and a health sweep every 50 ms (wall time).
const FAILING: [(&str, &str); 6] = [
    ("HOOKD_DELIVERY__JITTER", "0"),
    ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "10s", "20s"]"#),
    ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "2"),
    ("HOOKD_CIRCUIT__COOLDOWN_INITIAL", "5s"),
    ("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "50ms"),
    ("HOOKD_DELIVERY__POLL_INTERVAL", "50ms"),
];

const INFO: Level = Level::INFO;
const WARN: Level = Level::WARN;

/// Watches for `QUIET` that no more than the `n` lines said about
/// `endpoint` so far are said; returns them.
async fn no_more_than(endpoint: &str, n: usize) -> Vec<Said> {
    stays_quiet(QUIET, || async {
        let said = about(endpoint);
        (said.len() > n).then(|| format!("line {} was said: {:#?}", said.len(), said[n..].to_vec()))
    })
    .await;
    about(endpoint)
}

/// A receiver at a URL with a secret in its query that answers 200, then
/// 500 to a delivery's three attempts (the circuit opens; the delivery
/// goes dead), an hour of failing, then 200 again. Every event's body
/// carries `BODY-MARKER`. Returns the app, the endpoint, the receiver's
/// address and every line said about the endpoint (five, and no more).
async fn failing_then_recovering(backend: Backend) -> (TestApp, String, String, Vec<Said>) {
    listen();
    let app = spawn_app_with(backend, &FAILING).await;
    let receiver = Receiver::start().await;
    let host = receiver.addr().to_string();
    let (endpoint, _) = app
        .endpoint(&format!("{}/in?token=hush-hush", receiver.url()))
        .await;
    let body = json!({"note": "BODY-MARKER"});

    let ok = app.publish("a.b", body.clone()).await;
    app.wait_for_state(&ok, &endpoint, "delivered", SLOW).await;
    assert!(about(&endpoint).is_empty(), "a success says nothing");

    receiver.set_default(Reply::status(500));
    let failing = app.publish("a.b", body.clone()).await;
    lines(&endpoint, 1).await;
    // The second failure opens the circuit; the third, its probe, is the
    // last attempt: the delivery is dead, and the circuit reopens within
    // the minute, which is held back.
    advance(&app, 10);
    lines(&endpoint, 2).await;
    advance(&app, 20);
    app.wait_for_state(&failing, &endpoint, "dead", SLOW).await;
    lines(&endpoint, 3).await;

    // An hour of failing: marked failing. Then the receiver is back.
    receiver.set_default(Reply::status(200));
    advance(&app, 3600);
    lines(&endpoint, 4).await;
    app.publish("a.b", body).await;
    lines(&endpoint, 5).await;
    let said = no_more_than(&endpoint, 5).await;
    (app, endpoint, host, said)
}

#[both_backends]
async fn a_failing_receiver_says_each_line_once_and_in_order(backend: Backend) {
    let (_app, _endpoint, _host, said) = failing_then_recovering(backend).await;
    expect(
        &said,
        &[
            (INFO, "endpoint failing"),
            (WARN, "circuit opened"),
            (WARN, "delivery dead"),
            (
                WARN,
                "endpoint marked failing (no success for endpoints.warn_after)",
            ),
            (INFO, "endpoint delivering again after failed attempts"),
        ],
    );
    assert_eq!(said[2].field("delivery"), said[0].field("delivery"));
    assert_eq!(said[2].field("attempts"), "3");
    assert_eq!(said[4].field("failures"), "3", "{:?}", said[4]);
}

#[both_backends]
async fn the_first_failure_line_names_the_partner_host_status_category_attempt_and_delivery(
    backend: Backend,
) {
    let (app, _endpoint, host, said) = failing_then_recovering(backend).await;
    let first = &said[0];
    assert_eq!(first.field("partner"), app.partner_id);
    assert_eq!(first.field("host"), host);
    assert_eq!(first.field("status"), "500");
    assert_eq!(first.field("category"), "http_status");
    assert_eq!(first.field("attempt"), "1");
    assert!(first.field("delivery").starts_with("dlv_"), "{first:?}");
}

#[both_backends]
async fn no_line_about_a_failing_receiver_shows_its_urls_query_or_a_body(backend: Backend) {
    let (_app, endpoint, _host, said) = failing_then_recovering(backend).await;
    assert_eq!(said.len(), 5, "the lines to look through: {said:#?}");
    nowhere(&endpoint, "hush-hush");
    nowhere(&endpoint, "BODY-MARKER");
}

#[hookd_test_macros::test]
async fn a_receiver_that_answers_410_says_its_endpoint_is_disabled_and_why() {
    listen();
    let app = spawn_app_with(Backend::Sqlite, &FAILING).await;
    let receiver = Receiver::start().await;
    receiver.set_default(Reply::status(410));
    let (endpoint, _) = app.endpoint(&receiver.url()).await;
    app.publish("a.b", json!({})).await;
    let said = lines(&endpoint, 2).await;
    expect(
        &said,
        &[(INFO, "endpoint failing"), (WARN, "endpoint disabled")],
    );
    assert_eq!(said[0].field("status"), "410");
    assert_eq!(said[1].field("reason"), "the receiver answered 410 Gone");
    assert_eq!(said[1].field("partner"), app.partner_id);
    crate::harness::quiesce().await;
}

/// A retry an hour later, and a circuit that never opens: every event is
/// one attempt, at once.
const FLOOD: [(&str, &str); 3] = [
    ("HOOKD_DELIVERY__JITTER", "0"),
    ("HOOKD_DELIVERY__SCHEDULE", r#"["0s", "1h"]"#),
    ("HOOKD_CIRCUIT__FAILURE_THRESHOLD", "1000"),
];

#[hookd_test_macros::test]
async fn a_flood_of_blocked_attempts_is_one_line_then_a_count_a_minute_later() {
    listen();
    let app = spawn_app_with(Backend::Sqlite, &FLOOD).await;
    // Written straight to the store: registration would refuse it.
    let (endpoint, _) = app.endpoint("http://10.0.0.1/in?token=hush-hush").await;
    for n in 0..30 {
        app.publish("a.b", json!({"n": n, "note": "BODY-MARKER"}))
            .await;
    }
    let attempts = format!(
        "SELECT COUNT(*) AS n FROM attempt a JOIN delivery d ON d.id = a.delivery_id \
         WHERE d.endpoint_id = '{endpoint}'"
    );
    wait_until(SLOW, || async {
        (app.count(&attempts).await >= 30).then_some(())
    })
    .await
    .expect("30 blocked attempts recorded");
    let said = no_more_than(&endpoint, 2).await;
    expect(
        &said,
        &[
            (WARN, "attempt blocked by the egress policy"),
            (INFO, "endpoint failing"),
        ],
    );
    let blocked = &said[0];
    assert_eq!(
        blocked.field("reason"),
        "the callback URL points to a forbidden address: 10.0.0.1 is private-use (10.0.0.0/8)"
    );
    assert!(
        blocked
            .field("remedy")
            .contains(r#"HOOKD_EGRESS__ALLOW_CIDRS='["127.0.0.0/8", "10.0.0.1/32"]'"#),
        "the remedy names the exact /32 with what was allowed before: {blocked:?}"
    );
    assert_eq!(blocked.field("host"), "10.0.0.1:80");
    assert_eq!(blocked.field("suppressed"), "", "nothing held back yet");

    advance(&app, 61);
    app.publish("a.b", json!({"n": 30})).await;
    let said = lines(&endpoint, 3).await;
    assert_eq!(shape(&said[2..]), shape(&said[..1]), "a blocked line again");
    assert_eq!(
        said[2].field("suppressed"),
        "29",
        "the next line counts the 29 held back: {:?}",
        said[2]
    );
    nowhere(&endpoint, "hush-hush");
    nowhere(&endpoint, "BODY-MARKER");
    crate::harness::quiesce().await;
}
