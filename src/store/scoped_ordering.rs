//! A partner's view of its ordered subjects: the subjects held up behind
//! their heads, and skipping a dead head that holds one. Scoped like every
//! partner query: an endpoint or delivery of another partner is not found.

use super::{
    StoreError,
    ordering::{self, HeldSubject},
    scoped::{DeliveryRow, Scoped},
};

/// What skipping a delivery did.
#[derive(Debug)]
pub enum Skipped {
    /// It held its subject; now the subject moves on. The delivery, still dead.
    Released(DeliveryRow),
    /// It holds no subject (not dead, not ordered, or let go already).
    NotHolding(DeliveryRow),
}

impl Scoped<'_> {
    /// The subjects of this partner's endpoint `endpoint_id` held up behind
    /// their heads; `None` if the endpoint is not this partner's.
    pub async fn held_subjects(
        &self,
        endpoint_id: &str,
        limit: u32,
    ) -> Result<Option<Vec<HeldSubject>>, StoreError> {
        if self.endpoint(endpoint_id).await?.is_none() {
            return Ok(None);
        }
        Ok(Some(ordering::held(self.db, endpoint_id, limit).await?))
    }

    /// Lets this partner's dead delivery `delivery_id` stop holding its
    /// subject; `None` if it is not this partner's.
    pub async fn skip_head(
        &self,
        delivery_id: &str,
        now_ms: i64,
    ) -> Result<Option<Skipped>, StoreError> {
        let Some(d) = self.delivery(delivery_id).await? else {
            return Ok(None);
        };
        let released = ordering::skip(self.db, &d.endpoint_id, &d.id, now_ms).await?;
        let d = self.delivery(delivery_id).await?.unwrap_or(d);
        Ok(Some(if released {
            Skipped::Released(d)
        } else {
            Skipped::NotHolding(d)
        }))
    }
}
