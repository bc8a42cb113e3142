//! The `[endpoints]` section: how long an endpoint may fail with no success
//! before its owner is warned and before it is disabled, and how often the
//! health sweep looks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, duration, invalid};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEndpoints {
    warn_after: String,
    disable_after: String,
    health_interval: String,
}

#[derive(Debug, Clone)]
pub struct EndpointsConfig {
    /// Failing this long with no success: `endpoint.failing`.
    pub warn_after: Duration,
    /// Failing this long with no success: disabled, `endpoint.disabled`.
    pub disable_after: Duration,
    /// How often the health sweep decides the above for endpoints that get
    /// no attempts (it also runs once at start).
    pub health_interval: Duration,
}

impl RawEndpoints {
    pub(super) fn validate(self) -> Result<EndpointsConfig, ConfigError> {
        let health_interval = duration("endpoints.health_interval", &self.health_interval)?;
        if health_interval.is_zero() {
            return Err(invalid(
                "endpoints.health_interval",
                "must be greater than zero",
            ));
        }
        Ok(EndpointsConfig {
            warn_after: duration("endpoints.warn_after", &self.warn_after)?,
            disable_after: duration("endpoints.disable_after", &self.disable_after)?,
            health_interval,
        })
    }
}
