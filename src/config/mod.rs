//! Configuration: the compiled-in defaults, a TOML file and `HOOKD_*`
//! variables, merged (load.rs), checked against the keys the raw types
//! accept (keys.rs: a typo names its source and the key meant), read by
//! serde with unknown keys refused, then validated into typed values before
//! anything starts. Every error says the key and where its value came from.

use std::{path::PathBuf, time::Duration};

use serde::{Deserialize, Serialize};

mod catalog;
mod cluster;
mod database;
mod delivery;
mod egress;
mod endpoints;
mod env;
mod error;
mod file;
mod http;
mod incidents;
mod keys;
mod load;
mod notify;
mod payload;
mod proxy;
mod retention;
mod suggest;
mod telemetry;
mod values;
pub use catalog::CatalogConfig;
use catalog::RawCatalog;
pub use cluster::ClusterConfig;
use cluster::RawCluster;
pub use database::SqliteSynchronous;
use delivery::RawDelivery;
pub use delivery::{Connections, DeliveryConfig};
pub use egress::EgressConfig;
use egress::RawEgress;
pub use endpoints::EndpointsConfig;
use endpoints::RawEndpoints;
pub use env::{NOT_CONFIGURATION, NotAKey, is_not_configuration};
use error::invalid;
pub use error::{ConfigError, Problem, SetBy, Suggestion};
use http::RawHttp;
pub use http::{HttpConfig, Origin};
pub use incidents::IncidentsConfig;
pub use keys::env_name;
pub use notify::{NotifyConfig, SmtpConfig};
use notify::{RawNotify, RawSmtp};
pub use payload::PayloadConfig;
pub use proxy::{ProxyCredentials, ProxyHost, ProxyUrl, ProxyUrlError};
use telemetry::RawTelemetry;
pub use telemetry::TelemetryConfig;
pub use values::parse_duration;
use values::{cidrs, duration, positive, rate_limit};

/// The documented defaults, compiled in so a bare binary runs without files.
pub const DEFAULT_TOML: &str = include_str!("../../config/default.toml");

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    http: RawHttp,
    database: RawDatabase,
    secrets: RawSecrets,
    api: RawApi,
    retention: RawRetention,
    ingest: RawIngest,
    catalog: RawCatalog,
    delivery: RawDelivery,
    circuit: RawCircuit,
    endpoints: RawEndpoints,
    egress: RawEgress,
    log: RawLog,
    shutdown: RawShutdown,
    cluster: RawCluster,
    smtp: RawSmtp,
    notify: RawNotify,
    telemetry: RawTelemetry,
    payload: payload::RawPayload,
    incidents: incidents::RawIncidents,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawShutdown {
    grace: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawDatabase {
    url: String,
    max_connections: u32,
    acquire_timeout: String,
    sqlite_synchronous: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawSecrets {
    master_key: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawApi {
    page_size_default: u32,
    page_size_max: u32,
    rate_limit_per_second: u32,
    rate_limit_burst: u32,
    service_rate_limit_per_second: u32,
    service_rate_limit_burst: u32,
    anonymous_rate_limit_per_second: u32,
    anonymous_rate_limit_burst: u32,
    replay_window: String,
    max_secret_overlap: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawRetention {
    events: String,
    deliveries: String,
    sweep_interval: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawIngest {
    max_payload_bytes: usize,
    max_batch: usize,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawCircuit {
    failure_threshold: u32,
    cooldown_initial: String,
    cooldown_max: String,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawLog {
    filter: String,
    format: String,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub http: HttpConfig,
    pub database: DatabaseConfig,
    pub master_key: Option<String>,
    pub api: ApiConfig,
    pub retention: RetentionConfig,
    pub ingest: IngestConfig,
    pub catalog: CatalogConfig,
    pub delivery: DeliveryConfig,
    pub circuit: CircuitConfig,
    pub endpoints: EndpointsConfig,
    pub egress: EgressConfig,
    pub log: LogConfig,
    pub shutdown: ShutdownConfig,
    pub cluster: ClusterConfig,
    /// Where notices are mailed through; `None`: no mail.
    pub smtp: Option<SmtpConfig>,
    pub notify: NotifyConfig,
    pub telemetry: TelemetryConfig,
    pub payload: PayloadConfig,
    pub incidents: IncidentsConfig,
}

#[derive(Debug, Clone)]
pub struct ShutdownConfig {
    /// How long a stop waits for attempts in flight to finish and be recorded.
    pub grace: std::time::Duration,
}

#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    pub url: String,
    pub max_connections: u32,
    pub acquire_timeout: Duration,
    /// SQLite only: how a commit reaches the disk (see `SqliteSynchronous`).
    pub sqlite_synchronous: SqliteSynchronous,
}

impl DatabaseConfig {
    pub fn is_sqlite(&self) -> bool {
        self.url.starts_with("sqlite:")
    }
    /// The SQLite file, when the database is one.
    pub fn sqlite_path(&self) -> Option<PathBuf> {
        let rest = self.url.strip_prefix("sqlite:")?;
        let rest = rest.trim_start_matches("//");
        let path = rest.split('?').next().unwrap_or(rest);
        (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
    }
}

#[derive(Debug, Clone)]
pub struct ApiConfig {
    pub page_size_default: u32,
    pub page_size_max: u32,
    /// Per partner or operator key.
    pub rate_limit_per_second: u32,
    pub rate_limit_burst: u32,
    /// Per service key (producers).
    pub service_rate_limit_per_second: u32,
    pub service_rate_limit_burst: u32,
    /// Per client address, for requests without a valid key (and sign-ins).
    pub anonymous_rate_limit_per_second: u32,
    pub anonymous_rate_limit_burst: u32,
    pub replay_window: Duration,
    pub max_secret_overlap: Duration,
}

impl ApiConfig {
    /// The replay window in milliseconds.
    pub fn replay_window_ms(&self) -> i64 {
        i64::try_from(self.replay_window.as_millis()).unwrap_or(i64::MAX)
    }
}

#[derive(Debug, Clone)]
pub struct RetentionConfig {
    pub events: Duration,
    pub deliveries: Duration,
    pub sweep_interval: Duration,
}

#[derive(Debug, Clone)]
pub struct IngestConfig {
    pub max_payload_bytes: usize,
    pub max_batch: usize,
}

#[derive(Debug, Clone)]
pub struct CircuitConfig {
    pub failure_threshold: u32,
    pub cooldown_initial: Duration,
    pub cooldown_max: Duration,
}

#[derive(Debug, Clone)]
pub struct LogConfig {
    pub filter: String,
    pub json: bool,
}

impl Raw {
    /// `otel`: the `OTEL_*` variables, which `[telemetry]` falls back to.
    fn validate(self, otel: &telemetry::Fallbacks<'_>) -> Result<Config, ConfigError> {
        let http = self.http.validate()?;

        let url = self.database.url.trim().to_string();
        if !(url.starts_with("sqlite:")
            || url.starts_with("postgres://")
            || url.starts_with("postgresql://"))
        {
            return Err(invalid(
                "database.url",
                "must start with sqlite: or postgres://",
            ));
        }
        positive(
            "database.max_connections",
            self.database.max_connections.into(),
        )?;

        let master_key = match self.secrets.master_key.as_str() {
            "" => None,
            k if k.chars().count() < crate::secret::MIN_PASSPHRASE_CHARS => {
                return Err(invalid(
                    "secrets.master_key",
                    format!(
                        "must be at least {} characters",
                        crate::secret::MIN_PASSPHRASE_CHARS
                    ),
                ));
            }
            k => Some(k.to_string()),
        };

        positive(
            "ingest.max_payload_bytes",
            self.ingest.max_payload_bytes as u64,
        )?;
        let a = self.api;
        positive("api.page_size_max", a.page_size_max.into())?;
        if !(1..=a.page_size_max).contains(&a.page_size_default) {
            return Err(invalid(
                "api.page_size_default",
                format!(
                    "must be between 1 and api.page_size_max, {} (got {})",
                    a.page_size_max, a.page_size_default
                ),
            ));
        }
        rate_limit(
            "api.rate_limit_per_second",
            a.rate_limit_per_second,
            "api.rate_limit_burst",
            a.rate_limit_burst,
        )?;
        rate_limit(
            "api.service_rate_limit_per_second",
            a.service_rate_limit_per_second,
            "api.service_rate_limit_burst",
            a.service_rate_limit_burst,
        )?;
        rate_limit(
            "api.anonymous_rate_limit_per_second",
            a.anonymous_rate_limit_per_second,
            "api.anonymous_rate_limit_burst",
            a.anonymous_rate_limit_burst,
        )?;
        let api = ApiConfig {
            page_size_default: a.page_size_default,
            page_size_max: a.page_size_max,
            rate_limit_per_second: a.rate_limit_per_second,
            rate_limit_burst: a.rate_limit_burst,
            service_rate_limit_per_second: a.service_rate_limit_per_second,
            service_rate_limit_burst: a.service_rate_limit_burst,
            anonymous_rate_limit_per_second: a.anonymous_rate_limit_per_second,
            anonymous_rate_limit_burst: a.anonymous_rate_limit_burst,
            replay_window: duration("api.replay_window", &a.replay_window)?,
            max_secret_overlap: duration("api.max_secret_overlap", &a.max_secret_overlap)?,
        };
        let retention = RetentionConfig {
            events: duration("retention.events", &self.retention.events)?,
            deliveries: duration("retention.deliveries", &self.retention.deliveries)?,
            sweep_interval: duration("retention.sweep_interval", &self.retention.sweep_interval)?,
        };
        if retention.sweep_interval.is_zero() {
            return Err(invalid(
                "retention.sweep_interval",
                "must be greater than zero",
            ));
        }
        retention::check(&retention)?;
        if !(1..=10_000).contains(&self.ingest.max_batch) {
            return Err(invalid(
                "ingest.max_batch",
                format!(
                    "must be between 1 and 10000 (got {})",
                    self.ingest.max_batch
                ),
            ));
        }

        let delivery = self.delivery.validate()?;

        positive(
            "circuit.failure_threshold",
            self.circuit.failure_threshold.into(),
        )?;
        let circuit = CircuitConfig {
            failure_threshold: self.circuit.failure_threshold,
            cooldown_initial: duration("circuit.cooldown_initial", &self.circuit.cooldown_initial)?,
            cooldown_max: duration("circuit.cooldown_max", &self.circuit.cooldown_max)?,
        };
        let endpoints = self.endpoints.validate()?;
        let smtp = self.smtp.validate()?;
        let notify = self.notify.validate(smtp.is_some())?;

        let egress = self.egress.validate()?;
        let json = match self.log.format.as_str() {
            "text" => false,
            "json" => true,
            other => {
                return Err(invalid(
                    "log.format",
                    format!("`{other}` is not \"text\" or \"json\""),
                ));
            }
        };

        Ok(Config {
            http,
            database: DatabaseConfig {
                url,
                max_connections: self.database.max_connections,
                acquire_timeout: duration(
                    "database.acquire_timeout",
                    &self.database.acquire_timeout,
                )?,
                sqlite_synchronous: SqliteSynchronous::parse(&self.database.sqlite_synchronous)?,
            },
            master_key,
            api,
            retention,
            ingest: IngestConfig {
                max_payload_bytes: self.ingest.max_payload_bytes,
                max_batch: self.ingest.max_batch,
            },
            catalog: self.catalog.validate(),
            delivery,
            circuit,
            endpoints,
            egress,
            log: LogConfig {
                filter: self.log.filter,
                json,
            },
            shutdown: ShutdownConfig {
                grace: duration("shutdown.grace", &self.shutdown.grace)?,
            },
            cluster: self.cluster.validate()?,
            smtp,
            notify,
            telemetry: self.telemetry.validate(otel)?,
            payload: self.payload.validate()?,
            incidents: self.incidents.validate()?,
        })
    }
}

#[cfg(test)]
mod tests;
