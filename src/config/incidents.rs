//! The `[incidents]` section: when hookd tells partners that its own
//! delivery is impaired (`hookd.incident.opened`), and how often it looks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ConfigError, duration, invalid};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIncidents {
    enabled: bool,
    backlog_age: String,
    database_down: String,
    instances_down: String,
}

/// The thresholds of the causes hookd detects on its own.
#[derive(Debug, Clone)]
pub struct IncidentsConfig {
    /// Whether hookd opens incidents on its own (operators can always).
    pub enabled: bool,
    /// A partner's oldest due delivery waiting this long opens a `backlog` incident.
    pub backlog_age: Duration,
    /// The database unreachable this long opens a `database` incident once it is back.
    pub database_down: Duration,
    /// No instance that delivers alive this long opens an `instances` incident.
    pub instances_down: Duration,
}

/// A threshold of at least a second.
fn at_least_a_second(key: &'static str, text: &str) -> Result<Duration, ConfigError> {
    let d = duration(key, text)?;
    if d < Duration::from_secs(1) {
        return Err(invalid(
            key,
            format!("{d:?} is too short: give at least 1s, or set incidents.enabled = false"),
        ));
    }
    Ok(d)
}

impl RawIncidents {
    pub(super) fn validate(self) -> Result<IncidentsConfig, ConfigError> {
        Ok(IncidentsConfig {
            enabled: self.enabled,
            backlog_age: at_least_a_second("incidents.backlog_age", &self.backlog_age)?,
            database_down: at_least_a_second("incidents.database_down", &self.database_down)?,
            instances_down: at_least_a_second("incidents.instances_down", &self.instances_down)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;

    fn load(key: &str, value: &str) -> Result<Config, super::ConfigError> {
        Config::load(None, vec![(key.to_string(), value.to_string())])
    }

    #[test]
    fn the_thresholds_load_and_a_threshold_under_a_second_is_refused_by_name() {
        let c = load("HOOKD_INCIDENTS__BACKLOG_AGE", "1h").expect("an hour loads");
        assert_eq!(
            c.incidents.backlog_age,
            std::time::Duration::from_secs(3600)
        );
        assert_eq!(
            c.incidents.database_down,
            std::time::Duration::from_secs(120)
        );
        for key in [
            "HOOKD_INCIDENTS__BACKLOG_AGE",
            "HOOKD_INCIDENTS__DATABASE_DOWN",
        ] {
            let err = load(key, "0s").expect_err("zero is refused");
            let named = key
                .trim_start_matches("HOOKD_")
                .replace("__", ".")
                .to_lowercase();
            assert!(err.to_string().contains(&named), "{key}: {err}");
        }
    }
}
