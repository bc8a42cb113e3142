//! A host service using the transactional outbox: each change and the events
//! it causes commit together or not at all. hookd (running beside it on the
//! same database) delivers the events once their transaction commits.
//!
//! First a balance change and its `balance.updated` event; then a budget of
//! 100.00 USD through a few usage records and a credit: in each change's
//! transaction, `hookd::thresholds` decides which of the 80 % and 100 %
//! thresholds it crossed, and one `budget.threshold_crossed` event is
//! enqueued per crossing.
//!
//! Last, the state a partner reconciles from: the host's own tables, as the
//! host's Partner API would serve them (`current_state`). hookd's feed says
//! which objects changed; this says what they are now, and outlives hookd's
//! retention (see docs/producing.md, "What the host must serve").
//!
//! ```sh
//! cargo run --example producer -- sqlite://hookd.db ptn_…   # a partner id from `hookd partner create`
//! ```

#![allow(
    clippy::disallowed_methods,
    reason = "an example runs outside hookd: its own HTTP client and wall clock"
)]

use hookd::thresholds::{Amount, Band, Direction, Rearm, Rule, Threshold, Tracker, Update};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, Statement, TransactionTrait};
use serde_json::json;

#[actix_rt::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "sqlite://hookd.db".into());
    let partner = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: producer DATABASE_URL PARTNER_ID"))?;
    let db = Database::connect(&url).await?;

    // The host's own tables, for the example.
    db.execute_unprepared("CREATE TABLE IF NOT EXISTS example_balance (customer TEXT PRIMARY KEY, amount TEXT NOT NULL)")
        .await?;
    db.execute_unprepared("CREATE TABLE IF NOT EXISTS example_budget (budget TEXT PRIMARY KEY, spent_micros BIGINT NOT NULL)")
        .await?;

    let txn = db.begin().await?;
    txn.execute_raw(Statement::from_string(
        txn.get_database_backend(),
        "INSERT INTO example_balance (customer, amount) VALUES ('cus_204', '10.00') \
         ON CONFLICT (customer) DO UPDATE SET amount = '10.00'",
    ))
    .await?;
    let event = hookd::outbox::Event::new(
        "balance.updated",
        &partner,
        json!({"customer_id": "cus_204", "balance": "10.00", "currency": "USD"}),
    )
    .subject(
        "balance",
        "cus_204",
        Some(chrono::Utc::now().timestamp_millis()),
    )
    .correlation_id("op_example");
    let id = hookd::outbox::enqueue(&txn, event).await?;
    txn.commit().await?;
    println!("committed {id}; hookd delivers it to the partner's endpoints");

    // Each run opens a new budget period (spending back to 0), which
    // re-arms every threshold that fired in an earlier run.
    let start = chrono::Utc::now();
    let period = [start, start + chrono::Days::new(30)]
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    db.execute_unprepared("INSERT INTO example_budget (budget, spent_micros) VALUES ('bud_17', 0) ON CONFLICT (budget) DO UPDATE SET spent_micros = 0")
        .await?;
    let rule = Rule {
        direction: Direction::Rising,
        rearm: Rearm::Band(Band::new(Amount::parse("5")?)?),
    };
    let tracker = Tracker::new(rule, [Threshold::Percent(80), Threshold::Percent(100)])?;
    for (what, delta) in [
        ("usage", "79"),
        ("usage", "6"),
        ("usage", "16"),
        ("credit", "-31"),
        ("usage", "12"),
    ] {
        let line = spend(&db, &tracker, &partner, &period, Amount::parse(delta)?).await?;
        println!("{what:<6} {delta:>3}: {line}");
    }
    println!("state API: {}", current_state(&db).await?);
    Ok(())
}

/// What the host's Partner API answers for reconciliation, read from the
/// host's own tables (the authoritative state, not hookd's feed): for
/// example `GET /partner/v1/customers/cus_204/balance` and `GET
/// /partner/v1/budgets/bud_17`. A real host also serves customers, API keys
/// and ledger exports by time range, each scoped to the calling partner.
async fn current_state(db: &DatabaseConnection) -> anyhow::Result<serde_json::Value> {
    let backend = db.get_database_backend();
    let one = |sql: &str| Statement::from_string(backend, sql);
    let balance = db
        .query_one_raw(one(
            "SELECT amount FROM example_balance WHERE customer = 'cus_204'",
        ))
        .await?
        .map(|r| r.try_get::<String>("", "amount"))
        .transpose()?;
    let spent = db
        .query_one_raw(one(
            "SELECT spent_micros FROM example_budget WHERE budget = 'bud_17'",
        ))
        .await?
        .map(|r| r.try_get::<i64>("", "spent_micros"))
        .transpose()?
        .map(|m| Amount::from_micros(m.into()).map(|a| a.to_string()))
        .transpose()?;
    Ok(json!({
        "balance": {"customer_id": "cus_204", "currency": "USD", "amount": balance},
        "budget": {"budget_id": "bud_17", "currency": "USD", "limit": "100", "spent": spent},
    }))
}

/// Adds `delta` to the budget's spending and enqueues an event per threshold
/// it crossed, all in one transaction; says what happened.
async fn spend(
    db: &DatabaseConnection,
    tracker: &Tracker,
    partner: &str,
    period: &[String; 2],
    delta: Amount,
) -> anyhow::Result<String> {
    let txn = db.begin().await?;
    let backend = txn.get_database_backend();
    let row = txn
        .query_one_raw(Statement::from_sql_and_values(
            backend,
            "UPDATE example_budget SET spent_micros = spent_micros + $1 WHERE budget = 'bud_17' RETURNING spent_micros",
            [i64::try_from(delta.micros())?.into()],
        ))
        .await?
        .ok_or_else(|| anyhow::anyhow!("no budget bud_17"))?;
    let new = Amount::from_micros(row.try_get::<i64>("", "spent_micros")?.into())?;
    let prior = Amount::from_micros(new.micros() - delta.micros())?;
    let limit = Amount::parse("100")?;
    let update = Update {
        subject: "budget:bud_17",
        prior,
        new,
        budget: Some(limit),
        period: Some(&period[0]),
    };
    let outcome = tracker.record(&txn, &update).await?;
    let mut said = vec![format!("spent {prior} → {new}")];
    for crossing in &outcome.fired {
        let data = json!({
            "customer_id": "cus_204", "budget_id": "bud_17", "currency": "USD",
            "limit": limit.to_string(), "spent": new.to_string(),
            "threshold_percent": crossing.percent(),
            "period_start": period[0], "period_end": period[1],
        });
        let event = hookd::outbox::Event::new("budget.threshold_crossed", partner, data)
            .subject("budget", "bud_17", None);
        let id = hookd::outbox::enqueue(&txn, event).await?;
        said.push(format!("crossed {} ({id})", crossing.threshold));
    }
    for threshold in &outcome.rearmed {
        said.push(format!("re-armed {threshold}"));
    }
    txn.commit().await?;
    Ok(said.join("; "))
}
