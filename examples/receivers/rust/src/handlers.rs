//! The business handlers: what each event type does, inside the transaction
//! that marks its inbox row. Replace these with your own and keep the shape:
//! every effect is keyed on an id from the event, so applying it twice
//! changes nothing.

use anyhow::Context as _;
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::Value;
use sqlx::SqliteConnection;

/// What became of an event; stored as the inbox row's `status`.
#[derive(Clone, Copy, Debug)]
pub enum Status {
    Applied,
    /// A state event older than the state already applied.
    Stale,
    /// A type this code does not know: kept, to apply once it does.
    Ignored,
    /// hookd's `webhook.test` or `webhook.check`.
    Test,
    /// A handler failed; the row's `error` says why.
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Applied => "applied",
            Status::Stale => "stale",
            Status::Ignored => "ignored",
            Status::Test => "test",
            Status::Failed => "failed",
        }
    }
}

/// The envelope hookd sends (`data` varies by type).
#[derive(Deserialize)]
struct Event {
    event_id: String,
    #[serde(rename = "type")]
    event_type: String,
    subject: Option<Subject>,
    data: Value,
}

#[derive(Deserialize)]
struct Subject {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    version: Option<i64>,
}

impl Event {
    fn data<T: DeserializeOwned>(&self) -> anyhow::Result<T> {
        T::deserialize(&self.data).with_context(|| format!("{} data", self.event_type))
    }
}

/// Routes one stored event; returns the status it ends in.
pub async fn apply(conn: &mut SqliteConnection, body: &str) -> anyhow::Result<Status> {
    let event: Event = serde_json::from_str(body).context("the stored body is not an event")?;
    match event.event_type.as_str() {
        // hookd's own test and conformance-check events: acknowledged and
        // stored (so a repeated id is still a duplicate), given to no handler.
        // Route on this signed type, never on the unsigned `webhook-check`
        // header.
        "webhook.test" | "webhook.check" => Ok(Status::Test),
        // State: each carries a snapshot of its subject.
        "customer.created"
        | "customer.status_changed"
        | "api_key.created"
        | "api_key.status_changed"
        | "balance.updated" => keep_newest(conn, &event).await,
        // Facts: each is booked once, by its own id.
        "usage.finalized" => {
            let usage: UsageFinalized = event.data()?;
            let fact = Money {
                kind: "usage",
                source_id: usage.usage_id.or_else(|| subject_id(&event)),
                customer_id: usage.customer_id,
                currency: usage.currency,
                amount: usage.final_cost,
            };
            book(conn, &event, fact).await
        }
        "credit.adjustment_posted" => {
            let credit: AdjustmentPosted = event.data()?;
            let fact = Money {
                kind: "credit",
                source_id: credit.adjustment_id.or_else(|| subject_id(&event)),
                customer_id: credit.customer_id,
                currency: credit.currency,
                amount: credit.amount,
            };
            book(conn, &event, fact).await
        }
        // A type added to hookd's catalog after this code was written: 2xx
        // and kept in the inbox (refusing it would make hookd retry it for
        // days), to apply once you have a handler.
        _ => Ok(Status::Ignored),
    }
}

// ----- state: keep the newest version of each subject -----

/// Applies a state snapshot unless a newer or equal version of its subject is
/// already applied: a retry can bring version 6 after version 7.
async fn keep_newest(conn: &mut SqliteConnection, event: &Event) -> anyhow::Result<Status> {
    let Some(subject) = &event.subject else {
        tracing::warn!(
            event.event_id,
            "a state event without a subject: nothing to update"
        );
        return Ok(Status::Applied);
    };
    let current: Option<Option<i64>> = sqlx::query_scalar(
        "SELECT version FROM subjects WHERE subject_type = ? AND subject_id = ?",
    )
    .bind(&subject.kind)
    .bind(&subject.id)
    .fetch_optional(&mut *conn)
    .await?;
    if let (Some(version), Some(Some(applied))) = (subject.version, current)
        && applied >= version
    {
        return Ok(Status::Stale);
    }
    // Without a version there is no order to keep: the last one applied wins.
    // If that matters for a subject, read its state from the Partner API.
    sqlx::query(
        "INSERT INTO subjects (subject_type, subject_id, version, event_id, event_type, data, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (subject_type, subject_id) DO UPDATE SET
             version = COALESCE(excluded.version, subjects.version), event_id = excluded.event_id,
             event_type = excluded.event_type, data = excluded.data, updated_at = excluded.updated_at",
    )
    .bind(&subject.kind)
    .bind(&subject.id)
    .bind(subject.version)
    .bind(&event.event_id)
    .bind(&event.event_type)
    .bind(event.data.to_string())
    .bind(crate::now().timestamp_millis())
    .execute(&mut *conn)
    .await?;
    Ok(Status::Applied)
}

// ----- facts: book each once, keyed on its own source id -----

/// Money is a decimal string with its currency: keep it so, never a float.
#[derive(Deserialize)]
struct UsageFinalized {
    /// Older schema versions carry it only as the subject's id.
    usage_id: Option<String>,
    customer_id: String,
    currency: String,
    final_cost: String,
}

#[derive(Deserialize)]
struct AdjustmentPosted {
    adjustment_id: Option<String>,
    customer_id: String,
    currency: String,
    amount: String,
}

fn subject_id(event: &Event) -> Option<String> {
    event.subject.as_ref().map(|s| s.id.clone())
}

/// One ledger row.
struct Money {
    /// `usage` or `credit`.
    kind: &'static str,
    /// The fact's own id (`usage_id`, `adjustment_id`), never the event id.
    source_id: Option<String>,
    customer_id: String,
    currency: String,
    amount: String,
}

/// Books a money fact once per source id. The inbox already drops a repeated
/// event id; the source id also holds when the same fact reaches you another
/// way (the feed, an export, a support fix). Facts are never stale: an older
/// adjustment still happened.
async fn book(conn: &mut SqliteConnection, event: &Event, fact: Money) -> anyhow::Result<Status> {
    let source_id = fact
        .source_id
        .with_context(|| format!("{} without a source id", event.event_type))?;
    sqlx::query(
        "INSERT INTO ledger (kind, source_id, customer_id, currency, amount, event_id)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, source_id) DO NOTHING",
    )
    .bind(fact.kind)
    .bind(source_id)
    .bind(fact.customer_id)
    .bind(fact.currency)
    .bind(fact.amount)
    .bind(&event.event_id)
    .execute(&mut *conn)
    .await?;
    Ok(Status::Applied)
}
