//! The `[cluster]` section: how long an instance's endpoint leases last
//! without a heartbeat (instances heartbeat every third of it), and what
//! this instance runs (`role`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, duration, invalid};
use crate::domain::role::Role;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCluster {
    lease_ttl: String,
    role: String,
}

#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// An instance whose heartbeat is older than this is dead to the others,
    /// and its endpoints are taken over.
    pub lease_ttl: Duration,
    /// What this instance runs: everything, the API only, or delivery only.
    pub role: Role,
}

impl ClusterConfig {
    /// How often an instance renews its heartbeat and looks at the cluster.
    pub fn heartbeat(&self) -> Duration {
        self.lease_ttl / 3
    }
}

impl RawCluster {
    pub(super) fn validate(self) -> Result<ClusterConfig, ConfigError> {
        let lease_ttl = duration("cluster.lease_ttl", &self.lease_ttl)?;
        if lease_ttl < Duration::from_secs(1) {
            return Err(invalid(
                "cluster.lease_ttl",
                format!(
                    "{:?} is too short: instances heartbeat every third of it, so give them at least 1s",
                    lease_ttl
                ),
            ));
        }
        let role = self
            .role
            .parse()
            .map_err(|why| invalid("cluster.role", why))?;
        Ok(ClusterConfig { lease_ttl, role })
    }
}
