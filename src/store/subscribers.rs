//! Who an event goes to: the active endpoints of its partner, with what
//! publishing needs of each (its types, pins, ordering and filter).

use std::collections::{BTreeMap, HashMap};

use sea_orm::{ConnectionTrait, DbBackend, Value};

use super::{StoreError, placeholders, sql};
use crate::domain::{filter::Filter, ordering::Ordering};

/// An active endpoint as publishing sees it.
#[derive(Clone)]
pub struct Subscriber {
    pub id: String,
    /// The version of its row: PostgreSQL's `xmin`, which every change to
    /// the row replaces; empty on SQLite (see [`fingerprint`]).
    pub version: String,
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

/// What a partner's active endpoints were when read: each one's id and row
/// version, in byte order of the ids. The publishing statement computes the
/// same text from the rows it sees (`VERSIONS_NOW`), so a partner whose
/// endpoints changed since they were read is told from one whose did not.
/// A partner with none has the empty fingerprint.
pub fn fingerprint(subscribers: &[Subscriber]) -> String {
    let mut seen: Vec<(&str, &str)> = subscribers
        .iter()
        .map(|s| (s.id.as_str(), s.version.as_str()))
        .collect();
    seen.sort_unstable();
    let parts: Vec<String> = seen.iter().map(|(id, v)| format!("{id}:{v}")).collect();
    parts.join(",")
}

/// [`fingerprint`] as PostgreSQL computes it for the partner `x.partner_id`
/// from the rows its statement sees.
pub const VERSIONS_NOW: &str = "COALESCE((SELECT string_agg(s.id || ':' || s.xmin::text, ',' \
     ORDER BY s.id COLLATE \"C\") FROM endpoint s WHERE s.status = 'active' \
     AND s.partner_id = x.partner_id), '')";

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
                "SELECT id, partner_id, event_types, schema_versions, ordering, filter, {} AS version FROM endpoint WHERE status = 'active' AND partner_id IN ({})",
                if backend == DbBackend::Postgres { "xmin::text" } else { "''" },
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
                r.try_get::<String>("", "version")?,
            ))
        },
    )
    .await?;
    let mut by_partner: HashMap<String, Vec<Subscriber>> = HashMap::new();
    for (id, partner_id, types, pins, ordering, filter, version) in rows {
        let event_types: Vec<String> = serde_json::from_str(&types)
            .map_err(|e| StoreError::Corrupt(format!("endpoint {id} event_types: {e}")))?;
        let filter = super::endpoints::filter_from_text(filter.as_deref())
            .map_err(|e| StoreError::Corrupt(format!("endpoint {id} filter: {e}")))?;
        let pins = super::endpoints::pins_from_text(pins.as_deref())
            .map_err(|e| StoreError::Corrupt(format!("endpoint {id} schema_versions: {e}")))?;
        by_partner.entry(partner_id).or_default().push(Subscriber {
            id,
            version,
            event_types,
            pins,
            ordered: Ordering::parse(&ordering) == Some(Ordering::Subject),
            filter,
        });
    }
    Ok(by_partner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subscriber(id: &str, version: &str) -> Subscriber {
        Subscriber {
            id: id.into(),
            version: version.into(),
            event_types: Vec::new(),
            ordered: false,
            pins: BTreeMap::new(),
            filter: None,
        }
    }

    #[test]
    fn a_fingerprint_lists_each_endpoint_with_its_version_in_byte_order_of_the_ids() {
        let read = [
            subscriber("ep_b", "17"),
            subscriber("ep_B", "9"),
            subscriber("ep_a", "3"),
        ];
        assert_eq!(fingerprint(&read), "ep_B:9,ep_a:3,ep_b:17");
    }

    #[test]
    fn a_partner_without_active_endpoints_has_the_empty_fingerprint() {
        assert_eq!(fingerprint(&[]), "");
    }

    #[test]
    fn any_endpoint_added_removed_or_changed_changes_the_fingerprint() {
        let before = fingerprint(&[subscriber("ep_a", "3")]);
        assert_ne!(before, fingerprint(&[subscriber("ep_a", "4")]));
        assert_ne!(
            before,
            fingerprint(&[subscriber("ep_a", "3"), subscriber("ep_b", "5")])
        );
        assert_ne!(before, fingerprint(&[]));
    }
}
