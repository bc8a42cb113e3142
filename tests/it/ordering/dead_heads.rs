//! When a subject's head dies: `hold` keeps the subject waiting, shown as
//! held, until the head is replayed successfully or skipped; `skip` lets the
//! next one go, and the dead head's replay arrives marked out of band.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering::SeqCst},
};

use serde_json::{Value, json};

use super::{checker::OrderChecker, ordered_endpoint, publish_all, subject_event};
use crate::harness::{
    Backend, QUIET, TestApp, WAIT, expect_status, schedule::exact_schedule, spawn_app_with,
    stays_quiet, wait_until,
};
use hookd_test_macros::both_backends;

/// What `a_subject_whose_head_dies` sets up.
struct DeadHead {
    app: TestApp,
    checker: OrderChecker,
    /// Set: the receiver accepts the head from then on.
    healed: Arc<AtomicBool>,
    endpoint: String,
    key: String,
}

/// An ordered endpoint (`on_dead`) whose receiver refuses subject 0's first
/// event until healed; subjects 0 and 1 get three events each. One attempt
/// only, so a refused head dies at once. Returns once subject 1 is through.
async fn a_subject_whose_head_dies(backend: Backend, on_dead: &str) -> DeadHead {
    let app = spawn_app_with(backend, &exact_schedule(r#"["0s"]"#)).await;
    let healed = Arc::new(AtomicBool::new(false));
    let heal = Arc::clone(&healed);
    let checker = OrderChecker::start(std::time::Duration::ZERO, move |s, q| {
        match s == 0 && q == 0 && !heal.load(SeqCst) {
            true => u32::MAX,
            false => 0,
        }
    })
    .await;
    let (endpoint, key) =
        ordered_endpoint(&app, &checker.url(), json!({ "ordering_on_dead": on_dead })).await;
    let events: Vec<Value> = (0..3)
        .flat_map(|seq| [subject_event(&app, 0, seq), subject_event(&app, 1, seq)])
        .collect();
    publish_all(&app, &events).await;
    DeadHead {
        app,
        checker,
        healed,
        endpoint,
        key,
    }
}

/// The held subjects of the endpoint, as the Partner API lists them.
async fn held(d: &DeadHead) -> Value {
    let path = format!("/v1/endpoints/{}/held-subjects", d.endpoint);
    expect_status(&d.app.request("GET", &path, &d.key, None).await, 200)
}

/// Waits until the endpoint lists subject 0 as held by its dead head;
/// returns the head's delivery id.
async fn wait_for_the_dead_head(d: &DeadHead) -> String {
    wait_until(WAIT, || async {
        let listed = held(d).await;
        let first = &listed["data"][0];
        (first["held_by"] == "dead_head").then(|| {
            assert_eq!(
                first["subject"],
                json!({"type": "account", "id": "s0"}),
                "{listed}"
            );
            assert_eq!(first["waiting"], 2, "{listed}");
            first["head"]["delivery_id"]
                .as_str()
                .expect("an id")
                .to_string()
        })
    })
    .await
    .expect("subject 0 is listed as held by its dead head")
}

#[both_backends]
async fn a_held_subject_waits_for_its_dead_head_and_follows_its_replay_in_order(backend: Backend) {
    let d = a_subject_whose_head_dies(backend, "hold").await;
    d.checker
        .wait_accepted(3, WAIT)
        .await
        .expect("subject 1 is not held");
    let head = wait_for_the_dead_head(&d).await;
    stays_quiet(QUIET, || async {
        let accepted = d.checker.accepted_in_order();
        (!accepted.get(&0).is_none_or(Vec::is_empty))
            .then(|| format!("subject 0 moved: {accepted:?}"))
    })
    .await;

    let operator = d.app.operator_key().await;
    let waiting = r#"hookd_deliveries_waiting{state="waiting"}"#;
    assert_eq!(
        d.app.metric(&operator, waiting).await,
        2,
        "the operator sees what waits behind the dead head"
    );

    d.healed.store(true, SeqCst);
    let path = format!("/v1/deliveries/{head}/replay");
    expect_status(&d.app.request("POST", &path, &d.key, None).await, 202);
    d.checker
        .wait_accepted(6, WAIT)
        .await
        .expect("subject 0 follows its replayed head");
    assert_eq!(d.checker.violations(), Vec::<String>::new());
    assert_eq!(d.checker.accepted_in_order()[&0], [0, 1, 2]);
    let replayed = d.checker.receiver.received();
    assert!(
        replayed
            .iter()
            .any(|r| r.header("hookd-replay") == Some("out-of-band")),
        "a manual replay says it is out of band"
    );
    assert_eq!(
        held(&d).await["data"],
        json!([]),
        "nothing is held any more"
    );
}

#[both_backends]
async fn skipping_a_dead_head_lets_its_subject_move_on_and_keeps_it_dead(backend: Backend) {
    let d = a_subject_whose_head_dies(backend, "hold").await;
    let head = wait_for_the_dead_head(&d).await;
    let path = format!("/v1/deliveries/{head}/skip");
    let skipped = expect_status(&d.app.request("POST", &path, &d.key, None).await, 200);
    assert_eq!(skipped["state"], "dead", "{skipped}");
    d.checker
        .wait_accepted(5, WAIT)
        .await
        .expect("subject 0 moves on");
    assert_eq!(d.checker.accepted_in_order()[&0], [1, 2]);
    let again = d.app.request("POST", &path, &d.key, None).await;
    assert_eq!(again.0, 409, "a skipped head holds nothing: {}", again.1);

    let (_, other_key) = d.app.another_partner("Globex").await;
    let foreign = d.app.request("POST", &path, &other_key, None).await;
    assert_eq!(
        foreign.0, 404,
        "another partner's delivery is not found: {}",
        foreign.1
    );
}

#[both_backends]
async fn with_skip_the_next_event_goes_and_the_dead_heads_replay_comes_out_of_band(
    backend: Backend,
) {
    let d = a_subject_whose_head_dies(backend, "skip").await;
    d.checker
        .wait_accepted(5, WAIT)
        .await
        .expect("both subjects move past the dead head");
    assert_eq!(d.checker.accepted_in_order()[&0], [1, 2]);
    assert_eq!(held(&d).await["data"], json!([]), "skip holds nothing");

    let head = d
        .app
        .delivery_row(&first_event_of_subject_0(&d).await, &d.endpoint)
        .await;
    assert_eq!(head.state, "dead");
    d.healed.store(true, SeqCst);
    let path = format!("/v1/deliveries/{}/replay", head.id);
    expect_status(&d.app.request("POST", &path, &d.key, None).await, 202);
    d.checker
        .wait_accepted(6, WAIT)
        .await
        .expect("the replay is delivered");
    let last = d.checker.receiver.received().pop().expect("the replay");
    assert_eq!(last.header("hookd-replay"), Some("out-of-band"));
}

/// The event id of subject 0's first event, from the rows.
async fn first_event_of_subject_0(d: &DeadHead) -> String {
    use sea_orm::ConnectionTrait;
    let db = d.app.db();
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            "SELECT event_id FROM outbox_event WHERE subject_id = 's0' ORDER BY feed_seq LIMIT 1",
        ))
        .await
        .expect("the read")
        .expect("an event");
    row.try_get::<String>("", "event_id").expect("an id")
}
