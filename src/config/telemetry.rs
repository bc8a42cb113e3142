//! The `[telemetry]` section: traces exported over OTLP/HTTP (protobuf),
//! off by default. A key left at its default gives way to the standard
//! OpenTelemetry variable (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`,
//! `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, `OTEL_EXPORTER_OTLP_TIMEOUT`); a key
//! set in the file or by `HOOKD_TELEMETRY__*` wins over them.
//! `OTEL_SDK_DISABLED=true` turns telemetry off whatever the file says.

use std::{collections::BTreeMap, time::Duration};

use serde::{Deserialize, Serialize};

use super::{ConfigError, duration, invalid};

/// The process's `OTEL_*` variables, and which `telemetry` keys were left
/// at their defaults (only those give way to a variable).
pub(super) struct Fallbacks<'a> {
    pub vars: &'a BTreeMap<String, String>,
    pub at_default: &'a dyn Fn(&str) -> bool,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTelemetry {
    enabled: bool,
    endpoint: String,
    service_name: String,
    sampling_ratio: f64,
    export_timeout: String,
}

#[derive(Debug, Clone)]
pub struct TelemetryConfig {
    pub enabled: bool,
    /// The collector's traces URL (`…/v1/traces`).
    pub endpoint: String,
    pub service_name: String,
    /// The share of new traces recorded (0.0 to 1.0); a trace that came
    /// with a context follows the sampling decision in it.
    pub sampling_ratio: f64,
    /// How long one export may take before its spans are dropped.
    pub export_timeout: Duration,
}

impl RawTelemetry {
    pub(super) fn validate(self, otel: &Fallbacks<'_>) -> Result<TelemetryConfig, ConfigError> {
        let var = |name: &str| var(otel.vars, name);
        let unless = |key: &str, name: &str| var(name).filter(|_| (otel.at_default)(key));
        let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let endpoint_key = "telemetry.endpoint";
        let full = unless(endpoint_key, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let base = unless(endpoint_key, "OTEL_EXPORTER_OTLP_ENDPOINT");
        let endpoint = match (full, base) {
            (Some(full), _) => checked_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", full)?,
            (None, Some(base)) => checked_url("OTEL_EXPORTER_OTLP_ENDPOINT", &traces_url(base))?,
            (None, None) => checked_url(endpoint_key, &traces_url(self.endpoint.trim()))?,
        };
        let service_name = unless("telemetry.service_name", "OTEL_SERVICE_NAME")
            .unwrap_or(self.service_name.trim())
            .to_string();
        if service_name.is_empty() {
            return Err(invalid("telemetry.service_name", "must not be empty"));
        }
        if !(0.0..=1.0).contains(&self.sampling_ratio) {
            return Err(invalid(
                "telemetry.sampling_ratio",
                format!("must be between 0.0 and 1.0 (got {})", self.sampling_ratio),
            ));
        }
        let timeout_key = "telemetry.export_timeout";
        let export_timeout = match (otel.at_default)(timeout_key) {
            true => env_timeout(otel.vars)?,
            false => None,
        };
        let export_timeout = match export_timeout {
            Some(t) => t,
            None => duration(timeout_key, &self.export_timeout)?,
        };
        if export_timeout.is_zero() {
            return Err(invalid(
                "telemetry.export_timeout",
                "must be greater than zero",
            ));
        }
        Ok(TelemetryConfig {
            enabled: self.enabled && !disabled,
            endpoint,
            service_name,
            sampling_ratio: self.sampling_ratio,
            export_timeout,
        })
    }
}

/// A collector's base URL with the traces path the OTLP/HTTP specification
/// appends to it.
fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// `text` if it is an `http://` or `https://` URL with a host.
fn checked_url(key: &'static str, text: &str) -> Result<String, ConfigError> {
    match url::Url::parse(text) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
            Ok(u.to_string())
        }
        Ok(u) => Err(invalid(
            key,
            format!(
                "`{text}` must be an http:// or https:// URL with a host (got scheme {})",
                u.scheme()
            ),
        )),
        Err(e) => Err(invalid(key, format!("`{text}` is not a URL: {e}"))),
    }
}

/// The variable `name`, unless it is unset or blank.
fn var<'a>(vars: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    let value = vars.get(name).map(|v| v.trim());
    value.filter(|v| !v.is_empty())
}

/// The standard timeout variables, in milliseconds.
fn env_timeout(vars: &BTreeMap<String, String>) -> Result<Option<Duration>, ConfigError> {
    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ] {
        if let Some(text) = var(vars, name) {
            return text
                .parse::<u64>()
                .map(|ms| Some(Duration::from_millis(ms)))
                .map_err(|_| {
                    invalid(
                        "telemetry.export_timeout",
                        format!("{name}=`{text}` is not a number of milliseconds"),
                    )
                });
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(endpoint: &str) -> RawTelemetry {
        RawTelemetry {
            enabled: true,
            endpoint: endpoint.into(),
            service_name: "hookd".into(),
            sampling_ratio: 1.0,
            export_timeout: "10s".into(),
        }
    }

    const DEFAULT: &str = "http://localhost:4318";

    /// Validates with every key at its default unless it is in `set`.
    fn check(
        r: RawTelemetry,
        vars: &BTreeMap<String, String>,
        set: &[&str],
    ) -> Result<TelemetryConfig, ConfigError> {
        let at_default = |key: &str| !set.contains(&key);
        r.validate(&Fallbacks {
            vars,
            at_default: &at_default,
        })
    }

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn keys_at_their_defaults_give_way_to_the_standard_variables() {
        let full = env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:9/x")]);
        assert_eq!(
            check(raw(DEFAULT), &full, &[]).unwrap().endpoint,
            "http://c:9/x"
        );
        let base = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let c = check(raw(DEFAULT), &base, &[]).unwrap();
        assert_eq!(c.endpoint, "http://c:4318/v1/traces");
        assert_eq!(c.export_timeout, Duration::from_millis(2500));
        let none = check(raw(DEFAULT), &env(&[]), &[]).unwrap();
        assert_eq!(none.endpoint, "http://localhost:4318/v1/traces");
        assert_eq!(none.service_name, "hookd");
        assert_eq!(none.export_timeout, Duration::from_secs(10));
    }

    #[test]
    fn the_file_wins_over_the_standard_variables() {
        let vars = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_SERVICE_NAME", "from-env"),
        ]);
        let mut r = raw("https://collector.internal:4318");
        r.service_name = "from-file".into();
        let set = ["telemetry.endpoint", "telemetry.service_name"];
        let c = check(r, &vars, &set).unwrap();
        assert_eq!(c.endpoint, "https://collector.internal:4318/v1/traces");
        assert_eq!(c.service_name, "from-file");
        let named = check(raw(DEFAULT), &vars, &[]).unwrap();
        assert_eq!(named.service_name, "from-env");
    }

    #[test]
    fn otel_sdk_disabled_turns_telemetry_off() {
        let c = check(raw(DEFAULT), &env(&[("OTEL_SDK_DISABLED", "true")]), &[]);
        assert!(!c.unwrap().enabled);
    }

    #[test]
    fn a_bad_endpoint_ratio_or_timeout_is_refused_with_its_key() {
        let e = check(raw("grpc://c:4317"), &env(&[]), &[]).unwrap_err();
        assert!(e.to_string().contains("http:// or https://"), "{e}");
        let mut r = raw(DEFAULT);
        r.sampling_ratio = 1.5;
        let e = check(r, &env(&[]), &[]).unwrap_err();
        assert!(e.to_string().contains("between 0.0 and 1.0"), "{e}");
        let soon = env(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]);
        let e = check(raw(DEFAULT), &soon, &[]).unwrap_err();
        assert!(e.to_string().contains("OTEL_EXPORTER_OTLP_TIMEOUT"), "{e}");
        let mut r = raw(DEFAULT);
        r.export_timeout = "0s".into();
        assert!(check(r, &env(&[]), &[]).is_err());
    }
}
