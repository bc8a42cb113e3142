//! Typed values from configuration text: durations people write ("5m",
//! "1h30m"), positive counts, token-bucket pairs and CIDR lists, each with
//! an error that names its key.

use std::time::Duration;

use ipnet::IpNet;

use super::{ConfigError, invalid};

/// Parses "500ms", "5s", "5m", "2h", "3d" (and sums like "1h30m").
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit_len = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len() - digits);
        let (number, unit) = (&rest[..digits], &rest[digits..digits + unit_len]);
        let n: u64 = number.parse().map_err(|_| {
            format!("`{text}` is not a duration like \"5s\", \"5m\", \"2h\" or \"3d\"")
        })?;
        let unit = match unit.trim() {
            "ms" => Duration::from_millis(1),
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            "d" => Duration::from_secs(86_400),
            other => {
                return Err(format!(
                    "`{text}` has an unknown unit `{other}` (use ms, s, m, h or d)"
                ));
            }
        };
        total += unit * u32::try_from(n).map_err(|_| format!("`{text}` is too large"))?;
        rest = &rest[digits + unit_len..];
    }
    Ok(total)
}

pub(super) fn duration(key: &'static str, text: &str) -> Result<Duration, ConfigError> {
    parse_duration(text).map_err(|p| invalid(key, p))
}

pub(super) fn positive(key: &'static str, n: u64) -> Result<(), ConfigError> {
    if n == 0 {
        Err(invalid(key, "must be greater than zero"))
    } else {
        Ok(())
    }
}

/// A token bucket's rate and burst: a positive rate, a burst at least as large.
pub(super) fn rate_limit(
    rate_key: &'static str,
    rate: u32,
    burst_key: &'static str,
    burst: u32,
) -> Result<(), ConfigError> {
    positive(rate_key, rate.into())?;
    if burst < rate {
        return Err(invalid(
            burst_key,
            format!("must be at least {rate_key}, {rate} (got {burst})"),
        ));
    }
    Ok(())
}

pub(super) fn cidrs(key: &'static str, list: &[String]) -> Result<Vec<IpNet>, ConfigError> {
    list.iter()
        .map(|s| {
            s.parse::<IpNet>()
                .or_else(|_| s.parse::<std::net::IpAddr>().map(IpNet::from))
                .map_err(|_| invalid(key, format!("`{s}` is not a CIDR like \"10.0.0.0/8\"")))
        })
        .collect()
}
