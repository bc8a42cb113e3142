//! Conformance checks of a partner's endpoints: the slot that lets a check
//! of an endpoint start at most once per interval (one conditional upsert,
//! so the limit holds across instances), and the stored scorecards, newest
//! first. Reached through [`Scoped`], so only the partner's own endpoints.

use sea_orm::ConnectionTrait as _;

use super::{
    StoreError, query_all,
    scoped::{Position, Scoped},
    search::Search,
    sql,
};
use crate::domain::scorecard::Scorecard;

/// Whether a check may start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Claimed,
    /// The last check started too recently: the next may start this much later.
    Busy {
        retry_after_ms: i64,
    },
}

/// A stored check of an endpoint.
#[derive(Debug, Clone)]
pub struct StoredCheck {
    pub id: String,
    pub endpoint_id: String,
    pub scorecard: Scorecard,
    pub created_at: i64,
}

fn stored(r: &sea_orm::QueryResult) -> Result<StoredCheck, sea_orm::DbErr> {
    let id: String = r.try_get("", "id")?;
    let result: String = r.try_get("", "result")?;
    let scorecard = serde_json::from_str(&result).map_err(|e| {
        sea_orm::DbErr::Custom(format!("the scorecard of check {id} is not valid: {e}"))
    })?;
    Ok(StoredCheck {
        id,
        endpoint_id: r.try_get("", "endpoint_id")?,
        scorecard,
        created_at: r.try_get("", "created_at")?,
    })
}

impl Scoped<'_> {
    /// Takes the check slot of the partner's endpoint `endpoint_id` at
    /// `now_ms` unless a check of it started less than `every_ms` before;
    /// `None` when the endpoint is not the partner's.
    pub async fn claim_check(
        &self,
        endpoint_id: &str,
        now_ms: i64,
        every_ms: i64,
    ) -> Result<Option<Slot>, StoreError> {
        if self.endpoint(endpoint_id).await?.is_none() {
            return Ok(None);
        }
        let backend = self.db.get_database_backend();
        // The row lock of the upsert orders two instances claiming at once:
        // the second sees the first's time and updates nothing.
        let claimed = self
            .db
            .execute_raw(sql(
                backend,
                "INSERT INTO receiver_check_slot (endpoint_id, started_at) VALUES (?, ?) \
                 ON CONFLICT (endpoint_id) DO UPDATE SET started_at = excluded.started_at \
                 WHERE receiver_check_slot.started_at <= ?",
                vec![
                    endpoint_id.into(),
                    now_ms.into(),
                    (now_ms - every_ms).into(),
                ],
            ))
            .await?
            .rows_affected()
            == 1;
        if claimed {
            return Ok(Some(Slot::Claimed));
        }
        let last = self
            .db
            .query_one_raw(sql(
                backend,
                "SELECT started_at FROM receiver_check_slot WHERE endpoint_id = ?",
                vec![endpoint_id.into()],
            ))
            .await?
            .map(|r| r.try_get::<i64>("", "started_at"))
            .transpose()?
            .unwrap_or(now_ms);
        Ok(Some(Slot::Busy {
            retry_after_ms: (last + every_ms - now_ms).max(1),
        }))
    }

    /// Stores the scorecard of check `id` of the partner's endpoint.
    pub async fn record_check(
        &self,
        id: &str,
        endpoint_id: &str,
        card: &Scorecard,
        created_at: i64,
    ) -> Result<StoredCheck, StoreError> {
        let result = serde_json::to_string(card)
            .map_err(|e| StoreError::Corrupt(format!("a scorecard as JSON: {e}")))?;
        self.db
            .execute_raw(sql(
                self.db.get_database_backend(),
                "INSERT INTO receiver_check (id, endpoint_id, partner_id, passed, result, created_at) \
                 VALUES (?, ?, ?, ?, ?, ?)",
                vec![
                    id.into(),
                    endpoint_id.into(),
                    self.partner_id.into(),
                    card.passed.into(),
                    result.into(),
                    created_at.into(),
                ],
            ))
            .await?;
        Ok(StoredCheck {
            id: id.to_string(),
            endpoint_id: endpoint_id.to_string(),
            scorecard: card.clone(),
            created_at,
        })
    }

    /// The checks of the partner's endpoint, newest first, before `before`;
    /// `None` when the endpoint is not the partner's.
    pub async fn checks(
        &self,
        endpoint_id: &str,
        before: Option<&Position>,
        limit: u32,
    ) -> Result<Option<Vec<StoredCheck>>, StoreError> {
        if self.endpoint(endpoint_id).await?.is_none() {
            return Ok(None);
        }
        let stmt = Search::new(
            "SELECT id, endpoint_id, result, created_at FROM receiver_check \
             WHERE partner_id = ? AND endpoint_id = ?",
            vec![self.partner_id.into(), endpoint_id.into()],
        )
        .newest_first("created_at", "id", before, limit)
        .statement(self.db.get_database_backend());
        Ok(Some(query_all(self.db, stmt, stored).await?))
    }
}
