//! The delivery pulse: the last moment an instance that delivers was alive,
//! renewed with each of its heartbeats and kept when every instance has
//! stopped. How long it has been silent is how long nothing delivered.

use sea_orm::ConnectionTrait;

use super::{StoreError, query_all, sql};

/// Renews the pulse to `now_ms` (never moves it back: instances' clocks
/// differ a little).
pub async fn beat(db: &impl ConnectionTrait, now_ms: i64) -> Result<(), StoreError> {
    db.execute_raw(sql(
        db.get_database_backend(),
        "INSERT INTO delivery_pulse (id, beat_at) VALUES (1, ?) \
         ON CONFLICT (id) DO UPDATE SET beat_at = CASE \
           WHEN excluded.beat_at > delivery_pulse.beat_at THEN excluded.beat_at \
           ELSE delivery_pulse.beat_at END",
        vec![now_ms.into()],
    ))
    .await?;
    Ok(())
}

/// When an instance that delivers was last alive (none: never, on this database).
pub async fn last(db: &impl ConnectionTrait) -> Result<Option<i64>, StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT beat_at FROM delivery_pulse WHERE id = 1",
            vec![],
        ),
        |r| r.try_get("", "beat_at"),
    )
    .await?;
    Ok(rows.into_iter().next())
}
