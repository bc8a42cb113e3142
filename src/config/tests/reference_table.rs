//! The configuration reference (`docs/configuration.md`) read as data: it
//! lists exactly the keys `config/default.toml` has, and every default it
//! shows is the value `Config` holds.

use super::*;

const REFERENCE: &str = include_str!("../../../docs/configuration.md");

/// A default as the table writes it and as `Config` holds it, compared by kind.
#[derive(Debug, Clone, PartialEq)]
enum Shown {
    /// `(empty)`, `(empty: …)`, `(unset: …)`: no value.
    Empty,
    Text(String),
    /// A count or a fraction; the table may write bytes as `16 MiB`.
    Number(f64),
    Duration(Duration),
    /// A TOML array of texts or numbers, `[443, 8443]`.
    List(Vec<String>),
    /// A TOML array of durations, `["0s", "5s"]`.
    Durations(Vec<Duration>),
}

/// One row: its keys (with `.key` shorthand expanded) and one default each.
struct Row {
    keys: Vec<String>,
    defaults: Vec<String>,
}

/// The rows of the table under "## Every key".
fn rows() -> Vec<Row> {
    let section = REFERENCE
        .split("\n## Every key\n")
        .nth(1)
        .expect("docs/configuration.md has a \"## Every key\" section");
    let section = section.split("\n#").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let mut section = String::new();
            let keys = split_top(cells[0])
                .into_iter()
                .map(|k| {
                    let k = k.trim_matches('`');
                    match k.strip_prefix('.') {
                        Some(key) => format!("{section}.{key}"),
                        None => {
                            section = k.split('.').next().unwrap_or(k).to_string();
                            k.to_string()
                        }
                    }
                })
                .collect::<Vec<_>>();
            let mut defaults = split_top(cells[1]);
            if defaults.len() == 1 {
                defaults = vec![defaults[0].clone(); keys.len()];
            }
            assert_eq!(
                defaults.len(),
                keys.len(),
                "the reference's row {line:?} has {} keys but {} defaults",
                keys.len(),
                defaults.len()
            );
            Row { keys, defaults }
        })
        .collect()
}

/// `text` split at the commas that are not inside backticks, brackets,
/// parentheses or angle brackets.
fn split_top(text: &str) -> Vec<String> {
    let (mut parts, mut current, mut depth, mut quoted) = (Vec::new(), String::new(), 0, false);
    for c in text.chars() {
        match c {
            '`' => quoted = !quoted,
            '[' | '(' | '<' if !quoted => depth += 1,
            ']' | ')' | '>' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current.trim().to_string());
    parts
}

/// What the table's `text` says, read as the kind `like` is.
fn documented(text: &str, like: &Shown) -> Result<Shown, String> {
    if text.starts_with("(empty") || text.starts_with("(unset") {
        return Ok(Shown::Empty);
    }
    let text = text.trim_matches('`');
    let items = || -> Result<Vec<String>, String> {
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(|| format!("{text:?} is not a list like `[443, 8443]`"))?;
        Ok(inner
            .split(',')
            .map(|i| i.trim().trim_matches('"').to_string())
            .filter(|i| !i.is_empty())
            .collect())
    };
    Ok(match like {
        Shown::Empty | Shown::Text(_) => Shown::Text(text.to_string()),
        Shown::Number(_) => {
            let (number, unit) = match text.split_once(' ') {
                Some((n, "KiB")) => (n, 1024.0),
                Some((n, "MiB")) => (n, 1024.0 * 1024.0),
                _ => (text, 1.0),
            };
            let n: f64 = number
                .parse()
                .map_err(|_| format!("{text:?} is not a number"))?;
            Shown::Number(n * unit)
        }
        Shown::Duration(_) => Shown::Duration(parse_duration(text)?),
        Shown::List(_) => Shown::List(items()?),
        Shown::Durations(_) => Shown::Durations(
            items()?
                .iter()
                .map(|d| parse_duration(d))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// The value `key` has in `c`, the defaults (`mail`: the defaults with a
/// mail server set, where the `smtp` keys are read); `None` for a key this
/// test does not know how to read.
fn actual(c: &Config, mail: &SmtpConfig, key: &str) -> Option<Shown> {
    use Shown::{Duration as D, Number as N, Text as T};
    let text = |t: &dyn ToString| T(t.to_string());
    let list = |l: Vec<String>| Shown::List(l);
    let strings = |l: &[ipnet::IpNet]| list(l.iter().map(ToString::to_string).collect());
    let maybe = |t: Option<String>| t.map_or(Shown::Empty, T);
    let (h, a, d, e) = (&c.http, &c.api, &c.delivery, &c.egress);
    Some(match key {
        "http.listen" => text(&h.listen),
        "http.header_timeout" => D(h.header_timeout),
        "http.body_timeout" => D(h.body_timeout),
        "http.max_connections" => N(h.max_connections as f64),
        "http.max_connections_per_ip" => N(h.max_connections_per_ip as f64),
        "http.max_body_bytes" => N(h.max_body_bytes as f64),
        "http.max_uri_bytes" => N(h.max_uri_bytes as f64),
        "http.public_url" => maybe(h.public_url.as_ref().map(|o| o.as_str().to_string())),
        "http.trust_proxy" => strings(&h.trust_proxy),
        "http.ops_listen" => maybe(h.ops_listen.map(|a| a.to_string())),
        "http.unix_socket" => maybe(h.unix_socket.as_ref().map(|p| p.display().to_string())),
        "http.unix_socket_mode" => text(&format!("{:04o}", h.unix_socket_mode)),
        "database.url" => text(&c.database.url),
        "database.max_connections" => N(c.database.max_connections.into()),
        "database.acquire_timeout" => D(c.database.acquire_timeout),
        "database.sqlite_synchronous" => text(&c.database.sqlite_synchronous.as_str()),
        "secrets.master_key" => maybe(c.master_key.clone()),
        "api.page_size_default" => N(a.page_size_default.into()),
        "api.page_size_max" => N(a.page_size_max.into()),
        "api.rate_limit_per_second" => N(a.rate_limit_per_second.into()),
        "api.rate_limit_burst" => N(a.rate_limit_burst.into()),
        "api.service_rate_limit_per_second" => N(a.service_rate_limit_per_second.into()),
        "api.service_rate_limit_burst" => N(a.service_rate_limit_burst.into()),
        "api.anonymous_rate_limit_per_second" => N(a.anonymous_rate_limit_per_second.into()),
        "api.anonymous_rate_limit_burst" => N(a.anonymous_rate_limit_burst.into()),
        "api.replay_window" => D(a.replay_window),
        "api.max_secret_overlap" => D(a.max_secret_overlap),
        "retention.events" => D(c.retention.events),
        "retention.deliveries" => D(c.retention.deliveries),
        "retention.sweep_interval" => D(c.retention.sweep_interval),
        "ingest.max_payload_bytes" => N(c.ingest.max_payload_bytes as f64),
        "ingest.max_batch" => N(c.ingest.max_batch as f64),
        "catalog.path" => maybe(c.catalog.path.as_ref().map(|p| p.display().to_string())),
        "catalog.strict" => text(&c.catalog.strict),
        "payload.secret_screen" => text(&c.payload.secret_screen),
        "payload.allow" => list(c.payload.allow.clone()),
        "payload.patterns" => list(c.payload.patterns.clone()),
        "delivery.poll_interval" => D(d.poll_interval),
        "delivery.fanout_batch" => N(d.fanout_batch.into()),
        "delivery.default_concurrency" => N(d.default_concurrency.into()),
        "delivery.connect_timeout" => D(d.connect_timeout),
        "delivery.request_timeout" => D(d.request_timeout),
        "delivery.max_response_bytes" => N(d.max_response_bytes as f64),
        "delivery.schedule" => Shown::Durations(d.schedule.clone()),
        "delivery.jitter" => N(d.jitter),
        "delivery.max_age" => D(d.max_age),
        "delivery.retry_after_cap" => D(d.retry_after_cap),
        "delivery.lease" => D(d.lease),
        "delivery.record_batch" => N(d.record_batch as f64),
        "delivery.max_connections" => match d.max_connections {
            Connections::Auto => Shown::Empty,
            Connections::Fixed(x) => N(x as f64),
        },
        "delivery.idle_connection_timeout" => D(d.idle_connection_timeout),
        "circuit.failure_threshold" => N(c.circuit.failure_threshold.into()),
        "circuit.cooldown_initial" => D(c.circuit.cooldown_initial),
        "circuit.cooldown_max" => D(c.circuit.cooldown_max),
        "endpoints.warn_after" => D(c.endpoints.warn_after),
        "endpoints.disable_after" => D(c.endpoints.disable_after),
        "endpoints.health_interval" => D(c.endpoints.health_interval),
        "egress.allow_http" => text(&e.allow_http),
        "egress.allowed_ports" => list(e.allowed_ports.iter().map(u16::to_string).collect()),
        "egress.allow_cidrs" => strings(&e.allow_cidrs),
        "egress.deny_cidrs" => strings(&e.deny_cidrs),
        "egress.nameservers" => list(e.nameservers.iter().map(ToString::to_string).collect()),
        "egress.extra_ca_file" => maybe(e.extra_ca_file.as_ref().map(|p| p.display().to_string())),
        "egress.proxy" => maybe(e.proxy.as_ref().map(ToString::to_string)),
        "smtp.url" => maybe(c.smtp.as_ref().map(|s| s.url.clone())),
        "smtp.from" => text(&mail.from),
        "smtp.timeout" => D(mail.timeout),
        "notify.operator_url" => maybe(c.notify.operator_url.as_ref().map(|(u, _)| u.clone())),
        "notify.operator_secret" => maybe(c.notify.operator_url.as_ref().map(|_| "set".into())),
        "notify.operator_email" => maybe(c.notify.operator_email.as_ref().map(|a| a.to_string())),
        "log.filter" => text(&c.log.filter),
        "log.format" => text(&if c.log.json { "json" } else { "text" }),
        "shutdown.grace" => D(c.shutdown.grace),
        "cluster.lease_ttl" => D(c.cluster.lease_ttl),
        "cluster.role" => text(&c.cluster.role.name()),
        "telemetry.enabled" => text(&c.telemetry.enabled),
        "telemetry.endpoint" => text(&c.telemetry.endpoint.trim_end_matches("/v1/traces")),
        "telemetry.service_name" => text(&c.telemetry.service_name),
        "telemetry.sampling_ratio" => N(c.telemetry.sampling_ratio),
        "telemetry.export_timeout" => D(c.telemetry.export_timeout),
        "incidents.enabled" => text(&c.incidents.enabled),
        "incidents.backlog_age" => D(c.incidents.backlog_age),
        "incidents.database_down" => D(c.incidents.database_down),
        "incidents.instances_down" => D(c.incidents.instances_down),
        _ => return None,
    })
}

#[test]
fn the_documented_defaults_are_valid() {
    let defaults = Config::defaults();
    let mail = Config::load(None, env(&[("HOOKD_SMTP__URL", "smtp://localhost")]))
        .expect("the defaults with a mail server load")
        .smtp
        .expect("a mail server is configured");
    let keys = load::known_keys();
    let mut problems = Vec::new();
    let mut documented_keys = std::collections::BTreeSet::new();
    for row in rows() {
        for (key, text) in row.keys.iter().zip(&row.defaults) {
            documented_keys.insert(key.clone());
            if !keys.leaves().any(|k| k == key.as_str()) {
                problems.push(format!(
                    "`{key}` is in the table but is no configuration key"
                ));
                continue;
            }
            let Some(held) = actual(&defaults, &mail, key) else {
                problems.push(format!("`{key}`: this test cannot read it from Config yet"));
                continue;
            };
            match documented(text, &held) {
                Ok(shown) if shown == held => {}
                Ok(shown) => problems.push(format!(
                    "`{key}`: the table says {text} ({shown:?}), Config holds {held:?}"
                )),
                Err(why) => {
                    problems.push(format!("`{key}`: the table's {text} is unreadable: {why}"))
                }
            }
        }
    }
    for key in keys.leaves().filter(|k| !documented_keys.contains(*k)) {
        problems.push(format!(
            "`{key}` is a configuration key missing from the table"
        ));
    }
    assert!(
        problems.is_empty(),
        "docs/configuration.md's table disagrees with the defaults:\n  {}",
        problems.join("\n  ")
    );
}

/// The keys `config/default.toml` names, as `section.key`: each `key = …`
/// line under a `[section]`, and each optional key it shows commented out
/// (`# max_connections = 1024`).
fn default_toml_keys() -> std::collections::BTreeSet<String> {
    let mut keys = std::collections::BTreeSet::new();
    let mut section = "";
    for line in DEFAULT_TOML.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name;
            continue;
        }
        let setting = line.strip_prefix("# ").unwrap_or(line);
        if let Some((key, _)) = setting.split_once(" = ")
            && !key.is_empty()
            && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        {
            keys.insert(format!("{section}.{key}"));
        }
    }
    keys
}

#[test]
fn the_reference_lists_exactly_the_keys_of_the_default_file() {
    let in_file = default_toml_keys();
    let in_table: std::collections::BTreeSet<String> =
        rows().into_iter().flat_map(|r| r.keys).collect();
    assert!(
        in_file.len() >= 60,
        "the default file's keys were found: {in_file:?}"
    );
    let missing: Vec<_> = in_file.difference(&in_table).collect();
    let extra: Vec<_> = in_table.difference(&in_file).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/configuration.md lacks {missing:?} and lists {extra:?}, which config/default.toml does not have"
    );
}
