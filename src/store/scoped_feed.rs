//! A partner's event feed: its published events in feed order after a
//! cursor, optionally of one type and created within a time range. The
//! feed, the export and the portal's event list all read it here.

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::{StoreError, entity::outbox_event, scoped::Scoped};
use crate::domain::event::NewEvent;

/// Which events of the feed to read; `None` leaves a bound open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedFilter {
    /// Only events of this type.
    pub event_type: Option<String>,
    /// Created at or after (Unix milliseconds).
    pub since: Option<i64>,
    /// Created before (Unix milliseconds).
    pub until: Option<i64>,
}

impl Scoped<'_> {
    /// Published events matching `filter` in feed order after position
    /// `after`, at most `limit`, each with its position.
    pub async fn feed(
        &self,
        filter: &FeedFilter,
        after: i64,
        limit: u32,
    ) -> Result<Vec<(i64, NewEvent)>, StoreError> {
        let mut q = outbox_event::Entity::find()
            .filter(outbox_event::Column::PartnerId.eq(self.partner_id))
            .filter(outbox_event::Column::FeedSeq.gt(after));
        if let Some(t) = &filter.event_type {
            q = q.filter(outbox_event::Column::Type.eq(t.as_str()));
        }
        if let Some(since) = filter.since {
            q = q.filter(outbox_event::Column::CreatedAt.gte(since));
        }
        if let Some(until) = filter.until {
            q = q.filter(outbox_event::Column::CreatedAt.lt(until));
        }
        let rows = q
            .order_by_asc(outbox_event::Column::FeedSeq)
            .limit(u64::from(limit))
            .all(self.db)
            .await?;
        rows.into_iter()
            .map(|r| {
                let seq = r.feed_seq.unwrap_or(after);
                super::outbox::from_row(r).map(|e| (seq, e))
            })
            .collect()
    }
}
