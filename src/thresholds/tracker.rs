//! The armed state of each (subject, threshold) in the `threshold_state`
//! table, read and written in the host's own transaction: a crossing is
//! recorded exactly once, and commits or rolls back with the change that
//! caused it and with the events the host enqueues for it.

use sea_orm::{ConnectionTrait, DbErr};

use super::{
    amount::Amount,
    evaluate::{Change, Level, Outcome, evaluate},
    threshold::{Rule, Threshold, ThresholdError},
};
use crate::store::thresholds::{Stored, insert_armed, lock, write};

/// A set of thresholds and their rule, ready to record changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracker {
    rule: Rule,
    thresholds: Vec<Threshold>,
}

/// One change of a subject's value, as the host applied it in its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Update<'a> {
    /// What the value belongs to, e.g. `budget:bud_17` or `balance:cus_204`.
    pub subject: &'a str,
    pub prior: Amount,
    pub new: Amount,
    /// The amount percentage thresholds are a share of (a budget's limit).
    pub budget: Option<Amount>,
    /// The period the change belongs to, e.g. `2026-10`. A threshold that
    /// fired in another period is armed again in this one. `None`: the
    /// subject has no periods.
    pub period: Option<&'a str>,
}

#[derive(Debug, thiserror::Error)]
pub enum TrackerError {
    #[error(transparent)]
    Threshold(#[from] ThresholdError),
    #[error("reading or writing threshold_state failed")]
    Db(#[from] DbErr),
}

impl Tracker {
    /// Refuses a threshold given twice (`10` and `10.00` are one).
    pub fn new(
        rule: Rule,
        thresholds: impl IntoIterator<Item = Threshold>,
    ) -> Result<Tracker, ThresholdError> {
        let mut out: Vec<Threshold> = Vec::new();
        for t in thresholds {
            if out.iter().any(|o| o.key() == t.key()) {
                return Err(ThresholdError::Duplicate(t));
            }
            out.push(t);
        }
        Ok(Tracker {
            rule,
            thresholds: out,
        })
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    pub fn thresholds(&self) -> &[Threshold] {
        &self.thresholds
    }

    /// Evaluates `update` against the stored armed states and stores the new
    /// ones, through `conn`: the host's open transaction, the one that
    /// applied the change. Enqueue one event per returned crossing in that
    /// same transaction; if it rolls back, the states roll back with it and
    /// a retry fires again, once.
    ///
    /// The states of the subject are locked (`FOR UPDATE` on PostgreSQL;
    /// SQLite has one writer) until the transaction ends, so two changes of
    /// one subject are recorded one after the other. `prior` and `new` come
    /// from the host, which should read them under its own row lock.
    #[allow(
        clippy::disallowed_methods,
        reason = "runs in the host's process, which has no hookd clock to inject; updated_at is informational"
    )]
    #[tracing::instrument(skip_all, fields(subject = update.subject))]
    pub async fn record(
        &self,
        conn: &impl ConnectionTrait,
        update: &Update<'_>,
    ) -> Result<Outcome, TrackerError> {
        let direction = self.rule.direction;
        // Resolve first: a bad threshold fails before anything is written.
        let at = self
            .thresholds
            .iter()
            .map(|t| t.resolve(update.budget, direction))
            .collect::<Result<Vec<_>, _>>()?;
        if self.thresholds.is_empty() {
            return Ok(Outcome::default());
        }
        let keys: Vec<String> = self.thresholds.iter().map(Threshold::key).collect();
        let now = chrono::Utc::now().timestamp_millis();
        insert_armed(conn, update.subject, update.period, &keys, now).await?;
        let stored = lock(conn, update.subject, &keys).await?;

        let stored_armed: Vec<bool> = keys
            .iter()
            .map(|k| stored.get(k).is_none_or(|s| s.armed))
            .collect();
        let levels: Vec<Level> = (self.thresholds.iter().zip(&at).zip(&keys))
            .zip(&stored_armed)
            .map(|(((threshold, at), key), armed)| Level {
                threshold: threshold.clone(),
                at: *at,
                armed: *armed || ended(stored.get(key), update.period),
            })
            .collect();
        let mut outcome = evaluate(self.rule, &levels, Change::new(update.prior, update.new));
        // Re-armed relative to the stored state, so a re-arm by a new period
        // is reported too.
        outcome.rearmed = (levels.iter().zip(&stored_armed).zip(&outcome.armed))
            .filter(|((_, was), now)| !**was && **now)
            .map(|((l, _), _)| l.threshold.clone())
            .collect();

        for (key, armed) in keys.iter().zip(&outcome.armed) {
            let row = stored.get(key);
            let same =
                row.is_some_and(|r| r.armed == *armed && r.period.as_deref() == update.period);
            if !same {
                write(conn, update.subject, update.period, key, *armed, now).await?;
            }
        }
        for c in &outcome.fired {
            tracing::debug!(threshold = %c.threshold, at = %c.at, "threshold crossed");
        }
        Ok(outcome)
    }
}

/// Whether a stored state belongs to a period before `period`.
fn ended(row: Option<&Stored>, period: Option<&str>) -> bool {
    match (row, period) {
        (Some(r), Some(p)) => r.period.as_deref() != Some(p),
        _ => false,
    }
}
