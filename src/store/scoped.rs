//! Partner data, reached only through [`Scoped`], which carries the partner
//! id into every query: a handler cannot forget the tenant. Another
//! partner's object is simply not found.

use sea_orm::{ConnectionTrait, DatabaseConnection, TransactionTrait};

use super::{
    StoreError,
    endpoints::Endpoint,
    entity::{attempt, endpoint},
    query_all,
    search::Search,
    sql,
};
use crate::{
    domain::{event::NewEvent, ids::new_id},
    secret::{Secret, SecretBox},
    signing::{Scheme, SigningKey},
};

/// The delivery list's filters and positions are the search's.
pub use super::search::{DeliveryFilter, Position};

/// One partner's view of the store.
pub struct Scoped<'a> {
    pub(super) db: &'a DatabaseConnection,
    pub(super) partner_id: &'a str,
}

pub fn for_partner<'a>(db: &'a DatabaseConnection, partner_id: &'a str) -> Scoped<'a> {
    Scoped { db, partner_id }
}

/// Changes to an endpoint; `None` leaves a field as it is.
#[derive(Debug, Default, Clone)]
pub struct EndpointPatch {
    pub url: Option<String>,
    pub description: Option<String>,
    pub event_types: Option<Vec<String>>,
    pub schema_version: Option<Option<String>>,
    /// Replaces every pin when given.
    pub schema_versions: Option<std::collections::BTreeMap<String, u32>>,
    pub concurrency: Option<u32>,
    pub rate_limit: Option<Option<u32>>,
    pub ordering: Option<crate::domain::ordering::Ordering>,
    pub on_dead: Option<crate::domain::ordering::OnDead>,
    /// `Some(None)` removes the filter.
    pub filter: Option<Option<crate::domain::filter::Filter>>,
}

/// A delivery as partners see it.
#[derive(Debug, Clone)]
pub struct DeliveryRow {
    pub id: String,
    pub event_id: String,
    pub event_type: String,
    pub endpoint_id: String,
    pub state: String,
    pub attempt_count: i32,
    pub next_attempt_at: i64,
    pub last_status: Option<i32>,
    pub last_latency_ms: Option<i32>,
    pub last_error_category: Option<String>,
    /// Why it was closed without an attempt (`cancelled`).
    pub reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

pub(super) const DELIVERY_COLUMNS: &str = "d.id, d.event_id, o.type AS event_type, d.endpoint_id, d.state, d.attempt_count, \
     d.next_attempt_at, d.last_status, d.last_latency_ms, d.last_error_category, d.reason, d.created_at, d.updated_at";

/// Deliveries joined to their endpoint (for the partner) and event (for its type).
const DELIVERY_FROM: &str = "FROM delivery d JOIN endpoint e ON e.id = d.endpoint_id \
     JOIN outbox_event o ON o.event_id = d.event_id WHERE e.partner_id = ?";

pub(super) fn delivery_row(r: &sea_orm::QueryResult) -> Result<DeliveryRow, sea_orm::DbErr> {
    Ok(DeliveryRow {
        id: r.try_get("", "id")?,
        event_id: r.try_get("", "event_id")?,
        event_type: r.try_get("", "event_type")?,
        endpoint_id: r.try_get("", "endpoint_id")?,
        state: r.try_get("", "state")?,
        attempt_count: r.try_get("", "attempt_count")?,
        next_attempt_at: r.try_get("", "next_attempt_at")?,
        last_status: r.try_get("", "last_status")?,
        last_latency_ms: r.try_get("", "last_latency_ms")?,
        last_error_category: r.try_get("", "last_error_category")?,
        reason: r.try_get("", "reason")?,
        created_at: r.try_get("", "created_at")?,
        updated_at: r.try_get("", "updated_at")?,
    })
}

impl Scoped<'_> {
    pub fn partner_id(&self) -> &str {
        self.partner_id
    }

    fn backend(&self) -> sea_orm::DbBackend {
        self.db.get_database_backend()
    }

    // ----- endpoints -----

    /// Endpoints in creation order, after `after`.
    pub async fn endpoints(
        &self,
        after: Option<&Position>,
        limit: u32,
    ) -> Result<Vec<Endpoint>, StoreError> {
        use sea_orm::{
            ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, sea_query::Condition,
        };
        let mut q =
            endpoint::Entity::find().filter(endpoint::Column::PartnerId.eq(self.partner_id));
        if let Some((at, id)) = after {
            q = q.filter(
                Condition::any()
                    .add(endpoint::Column::CreatedAt.gt(*at))
                    .add(
                        Condition::all()
                            .add(endpoint::Column::CreatedAt.eq(*at))
                            .add(endpoint::Column::Id.gt(id.clone())),
                    ),
            );
        }
        q.order_by_asc(endpoint::Column::CreatedAt)
            .order_by_asc(endpoint::Column::Id)
            .limit(u64::from(limit))
            .all(self.db)
            .await?
            .into_iter()
            .map(Endpoint::try_from)
            .collect()
    }

    pub async fn endpoint(&self, id: &str) -> Result<Option<Endpoint>, StoreError> {
        super::endpoints::find_for_partner(self.db, self.partner_id, id).await
    }

    pub async fn update_endpoint(
        &self,
        id: &str,
        patch: EndpointPatch,
        now_ms: i64,
    ) -> Result<Option<Endpoint>, StoreError> {
        use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
        let Some(row) = endpoint::Entity::find_by_id(id.to_string())
            .filter(endpoint::Column::PartnerId.eq(self.partner_id))
            .one(self.db)
            .await?
        else {
            return Ok(None);
        };
        let routing_before = (row.ordering.clone(), row.ordering_on_dead.clone());
        let mut m: endpoint::ActiveModel = row.into();
        if let Some(url) = patch.url {
            m.url = Set(url);
        }
        if let Some(d) = patch.description {
            m.description = Set(d);
        }
        if let Some(t) = patch.event_types {
            m.event_types = Set(serde_json::to_string(&t).unwrap_or_else(|_| "[]".into()));
        }
        if let Some(v) = patch.schema_version {
            m.schema_version = Set(v);
        }
        if let Some(p) = patch.schema_versions {
            m.schema_versions = Set(super::endpoints::pins_to_text(&p));
        }
        if let Some(c) = patch.concurrency {
            m.concurrency = Set(i32::try_from(c).unwrap_or(i32::MAX));
        }
        if let Some(r) = patch.rate_limit {
            m.rate_limit = Set(r.map(|r| i32::try_from(r).unwrap_or(i32::MAX)));
        }
        if let Some(o) = patch.ordering {
            m.ordering = Set(o.as_str().into());
        }
        if let Some(d) = patch.on_dead {
            m.ordering_on_dead = Set(d.as_str().into());
        }
        if let Some(f) = patch.filter {
            m.filter = Set(super::endpoints::filter_to_text(f.as_ref()));
        }
        m.updated_at = Set(now_ms);
        match m.update(self.db).await {
            Ok(row) => {
                let e: Endpoint = row.try_into()?;
                let routing_after = (e.ordering.as_str(), e.on_dead.as_str());
                if (routing_before.0.as_str(), routing_before.1.as_str()) != routing_after {
                    super::ordering::settings_changed(
                        self.db,
                        &e.id,
                        e.ordering == crate::domain::ordering::Ordering::Subject,
                        e.on_dead == crate::domain::ordering::OnDead::Hold,
                        now_ms,
                    )
                    .await?;
                }
                Ok(Some(e))
            }
            // Deleted between the read and the write: it is gone, not broken.
            Err(sea_orm::DbErr::RecordNotUpdated) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn delete_endpoint(&self, id: &str) -> Result<bool, StoreError> {
        let res = self
            .db
            .execute_raw(sql(
                self.backend(),
                "DELETE FROM endpoint WHERE id = ? AND partner_id = ?",
                vec![id.into(), self.partner_id.into()],
            ))
            .await?;
        Ok(res.rows_affected() == 1)
    }

    /// A new signing key of `scheme`; the current ones keep signing until
    /// `now + overlap`.
    pub async fn rotate_secret(
        &self,
        secrets: &SecretBox,
        id: &str,
        scheme: Scheme,
        overlap_ms: i64,
        now_ms: i64,
    ) -> Result<Option<(SigningKey, i64)>, StoreError> {
        if self.endpoint(id).await?.is_none() {
            return Ok(None);
        }
        let until = now_ms + overlap_ms;
        let seed = Secret::generate();
        let key = SigningKey::from_stored(scheme, seed.clone())
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let row = super::endpoints::secret_row(secrets, id, (&seed, &key), now_ms);
        let txn = self.db.begin().await?;
        txn.execute_raw(sql(
            self.backend(),
            "UPDATE endpoint_secret SET expires_at = ? WHERE endpoint_id = ? AND (expires_at IS NULL OR expires_at > ?)",
            vec![until.into(), id.into(), until.into()],
        ))
        .await?;
        txn.execute_raw(sql(
            self.backend(),
            // Strictly after every earlier secret, so "newest" never ties
            // within a millisecond.
            "INSERT INTO endpoint_secret (id, endpoint_id, ciphertext, created_at, expires_at, scheme, public_key) \
             SELECT ?, ?, ?, MAX(t.at), NULL, ?, ? FROM (SELECT ? AS at UNION ALL \
             SELECT MAX(created_at) + 1 AS at FROM endpoint_secret WHERE endpoint_id = ?) AS t",
            vec![
                row.id.unwrap().into(),
                id.into(),
                row.ciphertext.unwrap().into(),
                row.scheme.unwrap().into(),
                row.public_key.unwrap().into(),
                now_ms.into(),
                id.into(),
            ],
        ))
        .await?;
        txn.commit().await?;
        Ok(Some((key, until)))
    }

    /// Ends every secret but the newest now; returns how many ended.
    pub async fn expire_previous_secrets(
        &self,
        id: &str,
        now_ms: i64,
    ) -> Result<Option<u64>, StoreError> {
        if self.endpoint(id).await?.is_none() {
            return Ok(None);
        }
        let res = self
            .db
            .execute_raw(sql(
                self.backend(),
                "UPDATE endpoint_secret SET expires_at = ? WHERE endpoint_id = ? AND (expires_at IS NULL OR expires_at > ?) \
                 AND id <> (SELECT id FROM endpoint_secret WHERE endpoint_id = ? ORDER BY created_at DESC, id DESC LIMIT 1)",
                vec![now_ms.into(), id.into(), now_ms.into(), id.into()],
            ))
            .await?;
        Ok(Some(res.rows_affected()))
    }

    // ----- deliveries -----

    /// Deliveries, newest first, before `before`.
    pub async fn deliveries(
        &self,
        f: &DeliveryFilter,
        before: Option<&Position>,
        limit: u32,
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        self.deliveries_on(self.db, f, before, limit).await
    }

    async fn deliveries_on(
        &self,
        conn: &impl ConnectionTrait,
        f: &DeliveryFilter,
        before: Option<&Position>,
        limit: u32,
    ) -> Result<Vec<DeliveryRow>, StoreError> {
        let mut search = Search::new(
            format!("SELECT {DELIVERY_COLUMNS} {DELIVERY_FROM}"),
            vec![self.partner_id.into()],
        );
        search.deliveries(f);
        let stmt = search
            .newest_first("d.created_at", "d.id", before, limit)
            .statement(self.backend());
        Ok(query_all(conn, stmt, delivery_row).await?)
    }

    pub async fn delivery(&self, id: &str) -> Result<Option<DeliveryRow>, StoreError> {
        self.delivery_on(self.db, id).await
    }

    async fn delivery_on(
        &self,
        conn: &impl ConnectionTrait,
        id: &str,
    ) -> Result<Option<DeliveryRow>, StoreError> {
        let text = format!("SELECT {DELIVERY_COLUMNS} {DELIVERY_FROM} AND d.id = ?");
        let rows = query_all(
            conn,
            sql(
                self.backend(),
                &text,
                vec![self.partner_id.into(), id.into()],
            ),
            delivery_row,
        )
        .await?;
        Ok(rows.into_iter().next())
    }

    /// One of this partner's deliveries with its attempts, oldest first, read
    /// from one snapshot: the attempts agree with the delivery's state and
    /// count even while the recorder is writing.
    pub async fn delivery_with_attempts(
        &self,
        id: &str,
    ) -> Result<Option<(DeliveryRow, Vec<attempt::Model>)>, StoreError> {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
        let txn = super::snapshot(self.db).await?;
        let Some(delivery) = self.delivery_on(&txn, id).await? else {
            return Ok(None);
        };
        let attempts = attempt::Entity::find()
            .filter(attempt::Column::DeliveryId.eq(id))
            .order_by_asc(attempt::Column::StartedAt)
            .order_by_asc(attempt::Column::AttemptNo)
            .all(&txn)
            .await?;
        txn.commit().await?;
        Ok(Some((delivery, attempts)))
    }

    /// Queues a manual attempt; `None` if the delivery is not this partner's.
    pub async fn replay(
        &self,
        delivery_id: &str,
        now_ms: i64,
    ) -> Result<Option<(String, DeliveryRow)>, StoreError> {
        let Some(d) = self.delivery(delivery_id).await? else {
            return Ok(None);
        };
        let id = super::deliveries::request_replay(self.db, &d.id, &d.endpoint_id, now_ms).await?;
        Ok(Some((id, d)))
    }

    /// Queues a manual attempt of every failed or dead delivery of one
    /// endpoint created in `[since, until)`; `None` if the endpoint is not
    /// this partner's.
    pub async fn recover(
        &self,
        endpoint_id: &str,
        since: i64,
        until: i64,
        now_ms: i64,
    ) -> Result<Option<u64>, StoreError> {
        if self.endpoint(endpoint_id).await?.is_none() {
            return Ok(None);
        }
        // One replay per delivery and request time; asking twice at the same
        // millisecond queues it once.
        let res = self
            .db
            .execute_raw(sql(
                self.backend(),
                "INSERT INTO replay (id, delivery_id, endpoint_id, requested_at, next_attempt_at) \
                 SELECT 'rpl_' || d.id || '_' || ?, d.id, d.endpoint_id, ?, ? FROM delivery d \
                 WHERE d.endpoint_id = ? AND d.state IN ('failed', 'dead') AND d.created_at >= ? AND d.created_at < ? \
                 ON CONFLICT (id) DO NOTHING",
                vec![now_ms.to_string().into(), now_ms.into(), now_ms.into(), endpoint_id.into(), since.into(), until.into()],
            ))
            .await?;
        Ok(Some(res.rows_affected()))
    }

    // ----- events (the feed is in `scoped_feed`) -----

    /// One of this partner's events (published or not), with its deliveries.
    pub async fn event(
        &self,
        event_id: &str,
    ) -> Result<Option<(NewEvent, Vec<DeliveryRow>)>, StoreError> {
        use super::entity::outbox_event;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        // One snapshot: the event and its deliveries' states agree.
        let txn = super::snapshot(self.db).await?;
        let Some(row) = outbox_event::Entity::find_by_id(event_id.to_string())
            .filter(outbox_event::Column::PartnerId.eq(self.partner_id))
            .one(&txn)
            .await?
        else {
            return Ok(None);
        };
        let filter = DeliveryFilter {
            event_id: Some(event_id.to_string()),
            ..DeliveryFilter::default()
        };
        let deliveries = self.deliveries_on(&txn, &filter, None, 1000).await?;
        txn.commit().await?;
        Ok(Some((super::outbox::from_row(row)?, deliveries)))
    }

    /// A `webhook.test` event delivered to this one endpoint only: stored as
    /// already published (outside the feed) with its single delivery.
    pub async fn send_test(
        &self,
        endpoint_id: &str,
        event: &NewEvent,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError> {
        if self.endpoint(endpoint_id).await?.is_none() {
            return Ok(None);
        }
        let txn = self.db.begin().await?;
        super::outbox::insert(&txn, std::slice::from_ref(event), now_ms).await?;
        txn.execute_raw(sql(
            self.backend(),
            "UPDATE outbox_event SET published_at = ? WHERE event_id = ?",
            vec![now_ms.into(), event.id.as_str().into()],
        ))
        .await?;
        let delivery_id = new_id("dlv");
        txn.execute_raw(sql(
            self.backend(),
            "INSERT INTO delivery (id, event_id, endpoint_id, state, attempt_count, next_attempt_at, created_at, updated_at) \
             VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)",
            vec![delivery_id.clone().into(), event.id.as_str().into(), endpoint_id.into(), now_ms.into(), now_ms.into(), now_ms.into()],
        ))
        .await?;
        txn.commit().await?;
        Ok(Some(delivery_id))
    }
}
