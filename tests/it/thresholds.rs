//! Threshold crossings recorded in the producer's transaction: one event per
//! crossing, committed with the change that caused it and rolled back with
//! it, so a retried change fires exactly once.

use hookd::{
    outbox::{Event, enqueue},
    thresholds::{Amount, Band, Direction, Rearm, Rule, Threshold, Tracker, Update},
};
use sea_orm::{ConnectionTrait, DatabaseConnection, DatabaseTransaction, TransactionTrait};
use serde_json::{Value, json};

use crate::harness::TestApp;
use hookd_test_macros::both_backends;

const BUDGET: &str = "budget:bud_17";

fn amount(s: &str) -> Amount {
    Amount::parse(s).expect("a valid amount")
}

/// 80 % and 100 % of a budget, re-armed 5.00 below.
fn budget_tracker(rearm: Rearm) -> Tracker {
    let rule = Rule {
        direction: Direction::Rising,
        rearm,
    };
    Tracker::new(rule, [Threshold::Percent(80), Threshold::Percent(100)]).expect("distinct")
}

fn band(s: &str) -> Rearm {
    Rearm::Band(Band::new(amount(s)).expect("non-negative"))
}

/// Records spending going from `prior` to `new` in `txn` and enqueues a
/// `budget.threshold_crossed` per crossing; returns their threshold_percent.
async fn spend(
    txn: &DatabaseTransaction,
    partner: &str,
    tracker: &Tracker,
    (prior, new): (&str, &str),
    period: &str,
) -> Vec<u32> {
    let update = Update {
        subject: BUDGET,
        prior: amount(prior),
        new: amount(new),
        budget: Some(amount("100.00")),
        period: Some(period),
    };
    let outcome = tracker.record(txn, &update).await.expect("recorded");
    let mut fired = Vec::new();
    for c in outcome.fired {
        let pct = c.percent().expect("percentage thresholds");
        let data = json!({
            "customer_id": "cus_204", "budget_id": "bud_17", "currency": "USD",
            "limit": "100.000000", "spent": c.new.to_string(), "threshold_percent": pct,
            "period_start": "2026-10-01T00:00:00Z", "period_end": "2026-11-01T00:00:00Z",
        });
        let event = Event::new("budget.threshold_crossed", partner, data);
        enqueue(txn, event)
            .await
            .expect("the data passes the catalog");
        fired.push(pct);
    }
    fired
}

/// As [`spend`], in a transaction of its own that commits.
async fn committed(
    db: &DatabaseConnection,
    partner: &str,
    t: &Tracker,
    change: (&str, &str),
) -> Vec<u32> {
    let txn = db.begin().await.expect("a transaction");
    let fired = spend(&txn, partner, t, change, "2026-10").await;
    txn.commit().await.expect("commits");
    fired
}

/// A change `(prior, new)`, what it fires and why.
type Step = ((&'static str, &'static str), &'static [u32], &'static str);

/// Commits each change of `steps` in turn with `t`, checking that it fires
/// what the step names.
async fn commit_each(app: &TestApp, t: &Tracker, steps: &[Step]) {
    for (change, fired, why) in steps {
        assert_eq!(
            committed(app.db(), &app.partner_id, t, *change).await,
            *fired,
            "spending {change:?}: {why}"
        );
    }
}

/// The `data` of every event of `event_type` in the outbox.
async fn outbox(app: &TestApp, event_type: &str) -> Vec<Value> {
    let db = app.db();
    let stmt = sea_orm::Statement::from_string(
        db.get_database_backend(),
        format!("SELECT payload FROM outbox_event WHERE type = '{event_type}'"),
    );
    let rows = db.query_all_raw(stmt).await.expect("the outbox reads");
    rows.iter()
        .map(|r| {
            let text: String = r.try_get("", "payload").expect("a payload");
            serde_json::from_str(&text).expect("JSON")
        })
        .collect()
}

async fn percents_in_outbox(app: &TestApp) -> Vec<u64> {
    let mut p: Vec<u64> = outbox(app, "budget.threshold_crossed")
        .await
        .iter()
        .map(|d| d["threshold_percent"].as_u64().expect("an integer"))
        .collect();
    p.sort();
    p
}

/// Asserts that the thresholds published so far (in the outbox) are
/// `percents`, in order; `why` says why.
async fn assert_published(app: &TestApp, percents: &[u64], why: &str) {
    assert_eq!(percents_in_outbox(app).await, percents, "{why}");
}

/// A month of spending on a budget of 100.00 (80 % and 100 %, re-armed
/// 5.00 below), each change with what it fires.
const SPENDING: [((&str, &str), &[u32]); 6] = [
    (("0", "79"), &[]),
    (("79", "85"), &[80]),
    (("85", "101"), &[100]),
    (("101", "90"), &[]),
    (("90", "70"), &[]),
    (("70", "82"), &[80]),
];

/// The first `n` changes of `SPENDING`, each committed and checked to
/// fire what it names.
async fn spend_the_first(app: &TestApp, n: usize) {
    let (db, partner, t) = (app.db(), &app.partner_id, &budget_tracker(band("5")));
    for (change, expected) in &SPENDING[..n] {
        assert_eq!(
            committed(db, partner, t, *change).await,
            *expected,
            "spending {change:?}"
        );
    }
}

#[both_backends]
async fn spending_below_80_percent_publishes_nothing(app: TestApp) {
    spend_the_first(&app, 1).await;
    assert_published(&app, &[], "79 % crosses nothing").await;
}

#[both_backends]
async fn spending_past_80_percent_publishes_80_once(app: TestApp) {
    spend_the_first(&app, 2).await;
    assert_eq!(percents_in_outbox(&app).await, [80]);
}

#[both_backends]
async fn spending_past_100_percent_publishes_100_and_not_80_again(app: TestApp) {
    spend_the_first(&app, 3).await;
    assert_eq!(percents_in_outbox(&app).await, [80, 100]);
}

#[both_backends]
async fn a_credit_below_the_band_rearms_80_percent_and_spending_past_it_publishes_it_again(
    app: TestApp,
) {
    spend_the_first(&app, 6).await;
    let why = "80 once, 100 once, 80 again after the credit re-armed it";
    assert_published(&app, &[80, 80, 100], why).await;
}

#[both_backends]
async fn a_dip_within_the_band_does_not_rearm_80_percent(app: TestApp) {
    #[rustfmt::skip]
        let steps: &[Step] = &[
            (("0", "85"),  &[80], "past 80"),
            (("85", "76"), &[],   "76 is within 5.00 of 80: still disarmed"),
            (("76", "84"), &[],   "back past 80 without a re-arm publishes nothing"),
        ];
    commit_each(&app, &budget_tracker(band("5")), steps).await;
    assert_eq!(percents_in_outbox(&app).await, [80]);
}

#[both_backends]
async fn a_crossings_money_stays_a_six_digit_decimal_string(app: TestApp) {
    spend_the_first(&app, 3).await;
    let spent: Vec<Value> = outbox(&app, "budget.threshold_crossed")
        .await
        .into_iter()
        .map(|d| d["spent"].clone())
        .collect();
    assert!(
        spent.contains(&json!("101.000000")),
        "money stays a 6-digit decimal string: {spent:?}"
    );
}

/// Spends `change` in a transaction that rolls back; what fired inside it.
async fn rolled_back(app: &TestApp, t: &Tracker, change: (&str, &str)) -> Vec<u32> {
    let txn = app.db().begin().await.expect("a transaction");
    let fired = spend(&txn, &app.partner_id, t, change, "2026-10").await;
    txn.rollback().await.expect("rolls back");
    fired
}

#[both_backends]
async fn a_rolled_back_crossing_leaves_no_state_and_no_event(app: TestApp) {
    let t = &budget_tracker(band("5"));
    assert_eq!(
        rolled_back(&app, t, ("79", "85")).await,
        [80],
        "it fired inside the transaction"
    );
    for (table, what) in [
        ("threshold_state", "no state"),
        ("outbox_event", "no event"),
    ] {
        let n = app
            .count(&format!("SELECT COUNT(*) AS n FROM {table}"))
            .await;
        assert_eq!(n, 0, "{what} survives a rollback");
    }
}

#[both_backends]
async fn a_change_retried_after_a_rollback_fires_once_and_its_duplicate_not_at_all(app: TestApp) {
    let t = &budget_tracker(band("5"));
    rolled_back(&app, t, ("79", "85")).await;
    #[rustfmt::skip]
        let steps: &[Step] = &[
            (("79", "85"), &[80], "the retry fires, once"),
            (("79", "85"), &[],   "a duplicate of the committed change does not"),
        ];
    commit_each(&app, t, steps).await;
    assert_eq!(percents_in_outbox(&app).await, [80]);
}

#[both_backends]
async fn a_rolled_back_crossing_of_100_percent_keeps_80_disarmed_and_100_armed(app: TestApp) {
    let (db, partner, t) = (app.db(), &app.partner_id, &budget_tracker(band("5")));
    committed(db, partner, t, ("79", "85")).await;
    assert_eq!(rolled_back(&app, t, ("85", "101")).await, [100]);
    assert_eq!(
        app.count("SELECT COUNT(*) AS n FROM threshold_state WHERE NOT armed")
            .await,
        1,
        "only 80 % is disarmed"
    );
    assert_eq!(committed(db, partner, t, ("85", "101")).await, [100]);
    assert_published(&app, &[80, 100], "each exactly once").await;
}

#[both_backends]
async fn two_transactions_crossing_at_once_publish_one_event(app: TestApp) {
    let (db, partner, t) = (app.db(), &app.partner_id, &budget_tracker(band("5")));
    // The rows exist (armed) before the race, so only their lock serialises it.
    assert_eq!(committed(db, partner, t, ("0", "79")).await, [0u32; 0]);
    let first = db.begin().await.expect("a transaction");
    assert_eq!(
        spend(&first, partner, t, ("79", "85"), "2026-10").await,
        [80]
    );
    // The second waits for the first's lock on the state, then sees 80 % fired.
    let second = async {
        let txn = db.begin().await.expect("a transaction");
        let fired = spend(&txn, partner, t, ("79", "85"), "2026-10").await;
        txn.commit().await.expect("commits");
        fired
    };
    // The pause only lets the second reach the lock first; the outcome
    // is the same in either order.
    let commit_first = async {
        actix_rt::time::sleep(std::time::Duration::from_millis(100)).await;
        first.commit().await.expect("commits");
    };
    let (fired, ()) = futures_util::join!(second, commit_first);
    assert_eq!(fired, [0u32; 0], "the second sees the first's crossing");
    assert_eq!(percents_in_outbox(&app).await, [80]);
}

#[both_backends]
async fn a_new_period_rearms_what_reversals_do_not(app: TestApp) {
    let (db, partner, t) = (app.db(), &app.partner_id, &budget_tracker(Rearm::NewPeriod));
    let in_period = |change, period| async move {
        let txn = db.begin().await.expect("a transaction");
        let fired = spend(&txn, partner, t, change, period).await;
        txn.commit().await.expect("commits");
        fired
    };
    assert_eq!(in_period(("0", "85"), "2026-10").await, [80]);
    assert_eq!(
        in_period(("85", "10"), "2026-10").await,
        [0u32; 0],
        "a refund does not re-arm"
    );
    assert_eq!(in_period(("10", "90"), "2026-10").await, [0u32; 0]);
    assert_eq!(
        in_period(("0", "90"), "2026-11").await,
        [80],
        "the next period does"
    );
}

#[both_backends]
async fn a_low_balance_publishes_once_as_it_falls_and_again_after_a_top_up(app: TestApp) {
    let rule = Rule {
        direction: Direction::Falling,
        rearm: Rearm::Band(Band::ZERO),
    };
    let t = Tracker::new(rule, [Threshold::parse("10.00").expect("valid")]).expect("one threshold");
    for (prior, new) in [("12", "9.5"), ("9.5", "8"), ("8", "15"), ("15", "10")] {
        let txn = app.db().begin().await.expect("a transaction");
        let update = Update {
            subject: "balance:cus_204",
            prior: amount(prior),
            new: amount(new),
            budget: None,
            period: None,
        };
        for c in t.record(&txn, &update).await.expect("recorded").fired {
            let data = json!({
                "customer_id": "cus_204", "currency": "USD", "balance": c.new.to_string(),
                "threshold": c.at.to_string(), "direction": "below", "previous_balance": c.prior.to_string(),
            });
            enqueue(
                &txn,
                Event::new("balance.threshold_crossed", &app.partner_id, data),
            )
            .await
            .expect("valid");
        }
        txn.commit().await.expect("commits");
    }
    let mut balances: Vec<Value> = outbox(&app, "balance.threshold_crossed")
        .await
        .into_iter()
        .map(|d| d["balance"].clone())
        .collect();
    balances.sort_by_key(|b| b.to_string());
    assert_eq!(
        balances,
        [json!("10.000000"), json!("9.500000")],
        "12 → 9.5 fired, 15 → 10 fired again; 9.5 → 8 did not"
    );
}
