//! The backlog sampled once a minute (`backlog_sample`), for the
//! dashboard's charts: deliveries by state and the outbox's age cannot be
//! read back for a past minute from the rows themselves. Whichever instance
//! gets to a minute first writes it; samples older than [`KEEP_MS`] go.

use sea_orm::{ConnectionTrait, FromQueryResult};

use super::{StoreError, backlog, query_all, sql};

/// How long samples are kept: the 24 h chart and a margin.
pub const KEEP_MS: i64 = 25 * 3_600_000;

const MINUTE_MS: i64 = 60_000;

/// The backlog at the start of one minute.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, FromQueryResult)]
pub struct Sample {
    /// Unix ms of the minute's start.
    pub minute: i64,
    pub pending: i64,
    pub failed: i64,
    pub delivering: i64,
    pub paused: i64,
    pub dead: i64,
    /// Committed events not yet fanned out.
    pub unpublished: i64,
    /// Age of the oldest of them, when there is one.
    pub outbox_age_ms: Option<i64>,
}

/// The start of the minute `at_ms` falls in.
pub fn minute_of(at_ms: i64) -> i64 {
    at_ms - at_ms.rem_euclid(MINUTE_MS)
}

/// Reads the backlog now (`attempts`: the retry schedule's length, which
/// the stuck count needs) as the sample of the current minute.
pub async fn read(
    db: &impl ConnectionTrait,
    now_ms: i64,
    attempts: usize,
) -> Result<Sample, StoreError> {
    let waiting = backlog::waiting(db).await?;
    let stuck = backlog::stuck(db, attempts).await?;
    let (unpublished, oldest) = backlog::unpublished(db).await?;
    Ok(Sample {
        minute: minute_of(now_ms),
        pending: waiting.pending,
        failed: waiting.failed,
        delivering: waiting.delivering,
        paused: stuck.paused,
        dead: stuck.dead,
        unpublished,
        outbox_age_ms: oldest.map(|t| (now_ms - t).max(0)),
    })
}

/// Whether the minute starting at `minute` has its sample.
pub async fn exists(db: &impl ConnectionTrait, minute: i64) -> Result<bool, StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT minute FROM backlog_sample WHERE minute = ?",
            vec![minute.into()],
        ),
        |r| r.try_get::<i64>("", "minute"),
    )
    .await?;
    Ok(!rows.is_empty())
}

/// Writes a sample unless its minute has one already (another instance
/// got there first); whether it was written.
pub async fn record(db: &impl ConnectionTrait, s: &Sample) -> Result<bool, StoreError> {
    let res = db
        .execute_raw(sql(
            db.get_database_backend(),
            "INSERT INTO backlog_sample (minute, pending, failed, delivering, paused, dead, unpublished, outbox_age_ms) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (minute) DO NOTHING",
            vec![
                s.minute.into(),
                s.pending.into(),
                s.failed.into(),
                s.delivering.into(),
                s.paused.into(),
                s.dead.into(),
                s.unpublished.into(),
                s.outbox_age_ms.into(),
            ],
        ))
        .await?;
    Ok(res.rows_affected() == 1)
}

/// Deletes the samples older than [`KEEP_MS`] before `now_ms`.
pub async fn prune(db: &impl ConnectionTrait, now_ms: i64) -> Result<u64, StoreError> {
    let res = db
        .execute_raw(sql(
            db.get_database_backend(),
            "DELETE FROM backlog_sample WHERE minute < ?",
            vec![(now_ms - KEEP_MS).into()],
        ))
        .await?;
    Ok(res.rows_affected())
}

/// The samples of minutes at or after `since_ms`, oldest first.
pub async fn since(db: &impl ConnectionTrait, since_ms: i64) -> Result<Vec<Sample>, StoreError> {
    let stmt = sql(
        db.get_database_backend(),
        "SELECT minute, pending, failed, delivering, paused, dead, unpublished, outbox_age_ms \
         FROM backlog_sample WHERE minute >= ? ORDER BY minute",
        vec![since_ms.into()],
    );
    Ok(Sample::find_by_statement(stmt).all(db).await?)
}

#[cfg(test)]
mod tests {
    use super::minute_of;

    #[test]
    fn a_time_falls_in_the_minute_that_starts_at_or_before_it() {
        assert_eq!(minute_of(120_000), 120_000);
        assert_eq!(minute_of(179_999), 120_000);
        assert_eq!(minute_of(-1), -60_000, "before 1970 too");
    }
}
