//! The mail queue: notices waiting to be mailed. An instance claims due
//! mails with a lease (another takes them over if it dies), and records
//! each as sent, due again, or dead.

use sea_orm::{ConnectionTrait, DbBackend, Value};

use super::{StoreError, query_all, sql};

/// A mail to send.
#[derive(Debug, Clone)]
pub struct Mail {
    pub id: String,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    /// Attempts including this one.
    pub attempts: u32,
}

/// Claims up to `limit` due mails until `lease_until`.
pub async fn claim_due(
    db: &impl ConnectionTrait,
    now_ms: i64,
    lease_until: i64,
    limit: i64,
) -> Result<Vec<Mail>, StoreError> {
    let backend = db.get_database_backend();
    let lock = if backend == DbBackend::Postgres {
        " FOR UPDATE SKIP LOCKED"
    } else {
        ""
    };
    Ok(query_all(
        db,
        sql(
            backend,
            &format!(
                "UPDATE mail SET lease_until = ?, attempts = attempts + 1 WHERE id IN \
                 (SELECT id FROM mail WHERE state = 'pending' AND next_attempt_at <= ? \
                 AND (lease_until IS NULL OR lease_until < ?) ORDER BY next_attempt_at LIMIT ?{lock}) \
                 RETURNING id, recipient, subject, body, attempts"
            ),
            vec![
                lease_until.into(),
                now_ms.into(),
                now_ms.into(),
                limit.into(),
            ],
        ),
        |r| {
            Ok(Mail {
                id: r.try_get("", "id")?,
                recipient: r.try_get("", "recipient")?,
                subject: r.try_get("", "subject")?,
                body: r.try_get("", "body")?,
                attempts: u32::try_from(r.try_get::<i32>("", "attempts")?).unwrap_or(0),
            })
        },
    )
    .await?)
}

/// What became of one try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    Yes,
    /// Failed; try again at this time.
    RetryAt(i64, String),
    /// Failed for good (refused, or out of attempts).
    Dead(String),
}

pub async fn record(
    db: &impl ConnectionTrait,
    id: &str,
    sent: Sent,
    now_ms: i64,
) -> Result<(), StoreError> {
    let (text, values): (&str, Vec<Value>) = match sent {
        Sent::Yes => (
            "UPDATE mail SET state = 'sent', sent_at = ?, lease_until = NULL, last_error = NULL WHERE id = ?",
            vec![now_ms.into(), id.into()],
        ),
        Sent::RetryAt(at, error) => (
            "UPDATE mail SET next_attempt_at = ?, lease_until = NULL, last_error = ? WHERE id = ?",
            vec![at.into(), error.into(), id.into()],
        ),
        Sent::Dead(error) => (
            "UPDATE mail SET state = 'dead', lease_until = NULL, last_error = ? WHERE id = ?",
            vec![error.into(), id.into()],
        ),
    };
    db.execute_raw(sql(db.get_database_backend(), text, values))
        .await?;
    Ok(())
}
