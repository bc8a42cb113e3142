//! A host service using the transactional outbox: the balance change and the
//! `balance.updated` event commit together or not at all. hookd (running beside
//! it on the same database) delivers the event once the transaction commits.
//!
//! ```sh
//! cargo run --example producer -- sqlite://hookd.db ptn_…   # a partner id from `hookd partner create`
//! ```

#![allow(
    clippy::disallowed_methods,
    reason = "an example runs outside hookd: its own HTTP client and wall clock"
)]

use sea_orm::{ConnectionTrait, Database, Statement, TransactionTrait};
use serde_json::json;

#[actix_rt::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "sqlite://hookd.db".into());
    let partner = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: producer DATABASE_URL PARTNER_ID"))?;
    let db = Database::connect(&url).await?;

    // The host's own table, for the example.
    db.execute_unprepared("CREATE TABLE IF NOT EXISTS example_balance (customer TEXT PRIMARY KEY, amount TEXT NOT NULL)")
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
    Ok(())
}
