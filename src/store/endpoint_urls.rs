//! Every endpoint that can still deliver (active or paused), with its
//! callback URL, a page at a time: what the start-up egress audit judges.

use sea_orm::{ConnectionTrait, Value};

use super::{StoreError, query_all, sql};

/// An endpoint's URL and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl {
    pub id: String,
    pub partner_id: String,
    pub url: String,
    /// `active` or `paused`.
    pub status: String,
    /// `endpoint`, or a notification endpoint's kind.
    pub kind: String,
}

/// Up to `limit` endpoints that can deliver, in id order, after `after`.
pub async fn deliverable(
    db: &impl ConnectionTrait,
    after: Option<&str>,
    limit: u64,
) -> Result<Vec<EndpointUrl>, StoreError> {
    let rows = query_all(
        db,
        sql(
            db.get_database_backend(),
            "SELECT id, partner_id, url, status, kind FROM endpoint \
             WHERE status IN ('active', 'paused') AND id > ? ORDER BY id LIMIT ?",
            vec![
                Value::from(after.unwrap_or_default()),
                Value::from(i64::try_from(limit).unwrap_or(i64::MAX)),
            ],
        ),
        |r| {
            Ok(EndpointUrl {
                id: r.try_get("", "id")?,
                partner_id: r.try_get("", "partner_id")?,
                url: r.try_get("", "url")?,
                status: r.try_get("", "status")?,
                kind: r.try_get("", "kind")?,
            })
        },
    )
    .await?;
    Ok(rows)
}
