//! Who an event goes to: the active endpoints of its partner, with what
//! publishing needs of each (its types, pins, ordering and filter).

use std::collections::{BTreeMap, HashMap};

use sea_orm::{ConnectionTrait, DbBackend, Value};

use super::{StoreError, placeholders, sql};
use crate::domain::{filter::Filter, ordering::Ordering};

/// An active endpoint as publishing sees it.
pub struct Subscriber {
    pub id: String,
    pub event_types: Vec<String>,
    /// Orders its deliveries per subject.
    pub ordered: bool,
    /// Event type → pinned version.
    pub pins: BTreeMap<String, u32>,
    /// Only events that pass it get a delivery.
    pub filter: Option<Filter>,
}

/// The active endpoints of some partners, by partner.
pub type Subscribers = HashMap<String, Vec<Subscriber>>;

/// The active endpoints of `partners`, by partner.
pub async fn active(
    db: &impl ConnectionTrait,
    backend: DbBackend,
    partners: &[&str],
) -> Result<Subscribers, StoreError> {
    let rows = super::query_all(
        db,
        sql(
            backend,
            &format!(
                "SELECT id, partner_id, event_types, schema_versions, ordering, filter FROM endpoint WHERE status = 'active' AND partner_id IN ({})",
                placeholders(partners.len())
            ),
            partners.iter().map(|p| Value::from(*p)).collect(),
        ),
        |r| {
            Ok((
                r.try_get::<String>("", "id")?,
                r.try_get::<String>("", "partner_id")?,
                r.try_get::<String>("", "event_types")?,
                r.try_get::<Option<String>>("", "schema_versions")?,
                r.try_get::<String>("", "ordering")?,
                r.try_get::<Option<String>>("", "filter")?,
            ))
        },
    )
    .await?;
    let mut by_partner: HashMap<String, Vec<Subscriber>> = HashMap::new();
    for (id, partner_id, types, pins, ordering, filter) in rows {
        let event_types: Vec<String> = serde_json::from_str(&types)
            .map_err(|e| StoreError::Corrupt(format!("endpoint {id} event_types: {e}")))?;
        let filter = super::endpoints::filter_from_text(filter.as_deref())
            .map_err(|e| StoreError::Corrupt(format!("endpoint {id} filter: {e}")))?;
        let pins = super::endpoints::pins_from_text(pins.as_deref())
            .map_err(|e| StoreError::Corrupt(format!("endpoint {id} schema_versions: {e}")))?;
        by_partner.entry(partner_id).or_default().push(Subscriber {
            id,
            event_types,
            pins,
            ordered: Ordering::parse(&ordering) == Some(Ordering::Subject),
            filter,
        });
    }
    Ok(by_partner)
}
