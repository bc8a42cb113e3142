//! Keys made for one `serve --dev` run, marked as such: the run revokes its
//! own when it stops, and a start revokes any a killed run left behind.

use sea_orm::{ConnectionTrait, DatabaseConnection, TransactionTrait};

use super::{StoreError, sql};

/// Marks `key_id` as made for the dev run `run_id`.
pub async fn mark(
    db: &impl ConnectionTrait,
    key_id: &str,
    run_id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    let stmt = sql(
        db.get_database_backend(),
        "INSERT INTO dev_key (key_id, run_id, created_at) VALUES (?, ?, ?)",
        vec![key_id.into(), run_id.into(), now_ms.into()],
    );
    db.execute_raw(stmt).await?;
    Ok(())
}

/// Revokes the keys of the run `run_id` (every dev run's when `None`) and
/// forgets them; how many were still valid.
pub async fn revoke(
    db: &DatabaseConnection,
    run_id: Option<&str>,
    now_ms: i64,
) -> Result<u64, StoreError> {
    let backend = db.get_database_backend();
    let (which, values) = match run_id {
        Some(r) => ("WHERE run_id = ?", vec![r.into()]),
        None => ("", vec![]),
    };
    let txn = db.begin().await?;
    let revoked = txn
        .execute_raw(sql(
            backend,
            &format!(
                "UPDATE api_key SET revoked_at = ? WHERE revoked_at IS NULL \
                 AND id IN (SELECT key_id FROM dev_key {which})"
            ),
            [vec![now_ms.into()], values.clone()].concat(),
        ))
        .await?
        .rows_affected();
    txn.execute_raw(sql(
        backend,
        &format!("DELETE FROM dev_key {which}"),
        values,
    ))
    .await?;
    txn.commit().await?;
    Ok(revoked)
}
