//! Who holds each endpoint's lease: read from the database, and which
//! instance holds the most.

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, QueryResult, Statement};

/// The instance that holds the most of `leases`, among the registered
/// `ids` (see `Fleet::wait_registered`): its index and its id.
pub fn busiest(leases: &[Lease], ids: &[Option<String>]) -> (usize, String) {
    let owns = |id: &Option<String>| leases.iter().filter(|l| l.owner == *id).count();
    let busiest = (0..ids.len())
        .max_by_key(|&i| owns(&ids[i]))
        .expect("instances");
    let id = ids[busiest]
        .clone()
        .expect("the busiest instance is registered");
    (busiest, id)
}

/// Who holds an endpoint's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub endpoint_id: String,
    pub path: String,
    pub owner: Option<String>,
    pub epoch: i64,
}

/// Reads every endpoint's lease, on the fleet's pool.
pub struct LeaseReader {
    pub(super) db: DatabaseConnection,
    pub(super) endpoint_ids: Vec<String>,
}

impl LeaseReader {
    /// The leases now, by endpoint id; None if the query fails.
    pub async fn read(&self) -> Option<Vec<Lease>> {
        let sql = "SELECT id, lease_owner, lease_epoch FROM endpoint ORDER BY id";
        let rows = self
            .db
            .query_all_raw(Statement::from_string(DbBackend::Postgres, sql))
            .await
            .ok()?;
        let lease = |r: &QueryResult| -> Option<Lease> {
            let endpoint_id: String = r.try_get("", "id").ok()?;
            let i = self.endpoint_ids.iter().position(|e| *e == endpoint_id)?;
            Some(Lease {
                path: format!("/hooks/{i}"),
                owner: r.try_get("", "lease_owner").ok()?,
                epoch: r.try_get("", "lease_epoch").ok()?,
                endpoint_id,
            })
        };
        rows.iter().map(lease).collect()
    }
}
