//! The `threshold_state` table of `hookd::thresholds`: the armed state of
//! each (subject, threshold), read and written in the host's transaction.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, DbBackend, DbErr, Value};

use super::{placeholders, query_all, sql};

/// A row of `threshold_state`.
pub struct Stored {
    pub armed: bool,
    pub period: Option<String>,
}

/// Adds the missing rows, armed. Writing before reading takes SQLite's write
/// lock now; on PostgreSQL a concurrent transaction adding the same row waits
/// for this one, so a first crossing cannot be recorded twice.
pub async fn insert_armed(
    conn: &impl ConnectionTrait,
    subject: &str,
    period: Option<&str>,
    keys: &[String],
    now: i64,
) -> Result<(), DbErr> {
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort(); // one lock order for every writer
    let rows = vec!["(?, ?, ?, ?, ?)"; sorted.len()].join(", ");
    let values = sorted
        .into_iter()
        .flat_map(|k| {
            [
                Value::from(subject),
                Value::from(k.as_str()),
                Value::from(true),
                Value::from(period),
                Value::from(now),
            ]
        })
        .collect();
    let text = format!(
        "INSERT INTO threshold_state (subject, threshold, armed, period, updated_at) \
         VALUES {rows} ON CONFLICT (subject, threshold) DO NOTHING"
    );
    conn.execute_raw(sql(conn.get_database_backend(), &text, values))
        .await?;
    Ok(())
}

/// Reads (and on PostgreSQL locks) the subject's rows for `keys`.
pub async fn lock(
    conn: &impl ConnectionTrait,
    subject: &str,
    keys: &[String],
) -> Result<HashMap<String, Stored>, DbErr> {
    let backend = conn.get_database_backend();
    let for_update = if backend == DbBackend::Postgres {
        " FOR UPDATE"
    } else {
        ""
    };
    let text = format!(
        "SELECT threshold, armed, period FROM threshold_state \
         WHERE subject = ? AND threshold IN ({}){for_update}",
        placeholders(keys.len())
    );
    let values = std::iter::once(Value::from(subject))
        .chain(keys.iter().map(|k| Value::from(k.as_str())))
        .collect();
    let rows = query_all(conn, sql(backend, &text, values), |r| {
        Ok((
            r.try_get::<String>("", "threshold")?,
            Stored {
                armed: r.try_get("", "armed")?,
                period: r.try_get("", "period")?,
            },
        ))
    })
    .await?;
    Ok(rows.into_iter().collect())
}

/// Stores one threshold's state.
pub async fn write(
    conn: &impl ConnectionTrait,
    subject: &str,
    period: Option<&str>,
    key: &str,
    armed: bool,
    now: i64,
) -> Result<(), DbErr> {
    let values = vec![
        Value::from(armed),
        Value::from(period),
        Value::from(now),
        Value::from(subject),
        Value::from(key),
    ];
    conn.execute_raw(sql(
        conn.get_database_backend(),
        "UPDATE threshold_state SET armed = ?, period = ?, updated_at = ? \
         WHERE subject = ? AND threshold = ?",
        values,
    ))
    .await?;
    Ok(())
}
