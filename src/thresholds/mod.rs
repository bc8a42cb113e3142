//! Threshold crossings for producers: which thresholds a change of a value
//! crossed (a budget reaching 80 %, a balance falling to 10.00), decided by
//! one explicit rule and recorded in the producer's own transaction, so each
//! crossing is published exactly once, with the change that caused it.
//!
//! The rule, rising (a falling threshold is its mirror image):
//! - a threshold `T` fires when `prior < T ≤ new`, only if it is armed, and
//!   firing disarms it; several thresholds crossed by one change fire one
//!   crossing each, in ascending order of `T`;
//! - it re-arms when the value falls below `T − band` (a credit or refund
//!   that far back), or at a new period, which re-arms every threshold;
//!   with [`Rearm::NewPeriod`] reversals never re-arm.
//!
//! Money is exact: [`Amount`] counts micro-units, the catalog's decimal
//! strings with up to 6 fractional digits. A percentage threshold is
//! `budget × pct / 100` rounded to the micro-unit away from firing early (up
//! when rising), so "at or above 80 %" never fires below 80 %.
//!
//! [`evaluate`] is the rule, pure; [`Tracker`] keeps the armed states in the
//! `threshold_state` table (a row absent is armed):
//!
//! ```no_run
//! # async fn example(db: &sea_orm::DatabaseConnection, partner: &str) -> anyhow::Result<()> {
//! use hookd::thresholds::{Amount, Band, Direction, Rearm, Rule, Threshold, Tracker, Update};
//! use sea_orm::TransactionTrait;
//! let rule = Rule { direction: Direction::Rising, rearm: Rearm::Band(Band::new(Amount::parse("5")?)?) };
//! let tracker = Tracker::new(rule, [Threshold::Percent(80), Threshold::Percent(100)])?;
//! let txn = db.begin().await?;
//! // … add the usage to the budget in `txn`: spent goes from 79.00 to 85.00 …
//! let update = Update {
//!     subject: "budget:bud_17",
//!     prior: Amount::parse("79.00")?,
//!     new: Amount::parse("85.00")?,
//!     budget: Some(Amount::parse("100.00")?),
//!     period: Some("2026-10"),
//! };
//! for crossing in tracker.record(&txn, &update).await?.fired {
//!     let data = serde_json::json!({
//!         "customer_id": "cus_204", "budget_id": "bud_17", "currency": "USD",
//!         "limit": "100.000000", "spent": crossing.new.to_string(),
//!         "threshold_percent": crossing.percent(),
//!         "period_start": "2026-10-01T00:00:00Z", "period_end": "2026-11-01T00:00:00Z",
//!     });
//!     let event = hookd::outbox::Event::new("budget.threshold_crossed", partner, data);
//!     hookd::outbox::enqueue(&txn, event).await?;
//! }
//! txn.commit().await?;
//! # Ok(()) }
//! ```

mod amount;
mod evaluate;
mod threshold;
mod tracker;

pub use amount::{Amount, AmountError};
pub use evaluate::{Change, Crossing, Level, Outcome, evaluate};
pub use threshold::{Band, Direction, Rearm, Rule, Threshold, ThresholdError};
pub use tracker::{Tracker, TrackerError, Update};

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
