//! Dev mode (`hookd serve --dev`, `hookd demo`, and `--dev` on the commands
//! that check a callback URL): deliveries may go to loopback and private
//! addresses, over plain http, on any port, so a receiver on this machine
//! works at once. Cloud metadata addresses stay refused. The start says
//! loudly that this is for a laptop, and shows how to reach a first
//! verified delivery.

use std::path::Path;

use ipnet::IpNet;

use crate::config::EgressConfig;

/// Loopback and private ranges: this machine, and the networks a laptop
/// sits in (RFC 1918, IPv6 unique local).
pub const LOCAL_CIDRS: [&str; 6] = [
    "127.0.0.0/8",
    "::1/128",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "fc00::/7",
];

/// The warning dev mode logs once, at start.
pub const WARNING: &str = "DEV MODE: deliveries may go to loopback and private addresses, over plain \
     http, on any port. This is unsafe anywhere but your own machine: a callback URL could reach \
     services on your network. Never run --dev where others can register endpoints.";

/// Widens `egress` to dev mode's: plain http, any port, loopback and private
/// ranges. `egress.deny_cidrs` still wins, and metadata addresses stay refused.
pub fn allow_local(egress: &mut EgressConfig) {
    egress.allow_http = true;
    egress.allowed_ports.clear();
    for cidr in LOCAL_CIDRS {
        let net: IpNet = cidr.parse().expect("a valid CIDR constant");
        if !egress.allow_cidrs.contains(&net) {
            egress.allow_cidrs.push(net);
        }
    }
}

/// How to run this same binary from a shell: its path (relative to the
/// working directory when inside it, `hookd` when that is what PATH finds),
/// with `--config FILE` when one was given.
pub fn invocation(config: Option<&Path>) -> String {
    let exe = std::env::current_exe().ok();
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("hookd"))
            .find(|c| c.is_file())
    });
    let same = |a: &Path, b: &Path| a.canonicalize().ok() == b.canonicalize().ok();
    let mut command = match (&exe, &found) {
        (Some(e), Some(f)) if same(e, f) => "hookd".to_string(),
        (Some(e), _) => {
            let cwd = std::env::current_dir().ok();
            match cwd.as_deref().and_then(|c| e.strip_prefix(c).ok()) {
                Some(rel) => shell_word(&format!("./{}", rel.display())),
                None => shell_word(&e.display().to_string()),
            }
        }
        (None, _) => "hookd".to_string(),
    };
    if let Some(c) = config {
        command.push_str(" --config ");
        command.push_str(&shell_word(&c.display().to_string()));
    }
    command
}

/// `word` quoted for a POSIX shell if it needs it.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@%,".contains(c));
    if plain && !word.is_empty() {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What the dev-mode banner shows.
pub struct Banner<'a> {
    /// `http://127.0.0.1:8080`.
    pub base: &'a str,
    pub database: &'a str,
    pub operator_key: &'a str,
    pub service_key: &'a str,
    /// How to run hookd (`invocation`).
    pub hookd: &'a str,
    /// The `HOOKD_*` variables set now: another terminal needs them too.
    pub variables: &'a [String],
    /// A port for the example receiver.
    pub receiver_port: u16,
    /// A sample event of the catalog: its type, version and `data`.
    pub sample: (&'a str, u32, &'a serde_json::Value),
}

/// How to run the example receiver with the profile this hookd was built
/// with, so that cargo reuses what it built for hookd (a debug hookd and a
/// release receiver would compile every dependency a second time).
pub const RUN_RECEIVER: &str = if cfg!(debug_assertions) {
    "cargo run -p hookd-example-receiver"
} else {
    "cargo run --release -p hookd-example-receiver"
};

/// The partner id the banner's commands use.
const PARTNER: &str = "acme";

/// The banner `serve --dev` prints once it listens: the dashboard and fresh
/// keys, then the three commands to a first verified delivery.
pub fn banner(b: &Banner) -> String {
    let (base, hookd, port) = (b.base, b.hookd, b.receiver_port);
    let (event_type, version, data) = b.sample;
    let event = event_json(event_type, PARTNER, version, data);
    let env_note = if b.variables.is_empty() {
        String::new()
    } else {
        format!(
            "\n  (set the same variables there too, so the commands read the configuration hookd reads:\n   {})",
            b.variables.join(" ")
        )
    };
    format!(
        "\n{WARNING}\n\n\
         hookd is listening on {base} (database {database}).\n\n  \
         dashboard     {base}/dashboard\n  \
         operator key  {op}   sign in with it (revoked when this run stops)\n  \
         service key   {svc}   publishes events (revoked when this run stops)\n\n\
         A first verified delivery, in another terminal from the checkout:{env_note}\n\n  \
         1. A partner, and an endpoint at a receiver on this machine; the second prints the\n     \
            endpoint's signing secret (shown once) and the receiver command with it:\n       \
              {hookd} partner create --id {PARTNER} --name Acme\n       \
              {hookd} endpoint create --dev --partner {PARTNER} --url http://127.0.0.1:{port}/webhooks\n\n  \
         2. The example receiver: it verifies each signature and keeps what it accepts in inbox.db:\n       \
              WEBHOOK_SECRETS='whsec_…' HOST=127.0.0.1 PORT={port} INBOX_DB=inbox.db \\\n         \
                {RUN_RECEIVER}\n\n  \
         3. An event:\n       \
              curl -sS {base}/v1/events -H 'Authorization: Bearer {svc}' \\\n         \
                -H 'content-type: application/json' -d '{event}'\n\n\
         The receiver logs the delivery; the dashboard shows its attempts. Ctrl-C stops hookd.\n",
        database = b.database,
        op = b.operator_key,
        svc = b.service_key,
    )
}

/// An event for `POST /v1/events`, its fields in the order a person reads
/// them (`type` first, `data` last).
pub fn event_json(
    event_type: &str,
    partner: &str,
    version: u32,
    data: &serde_json::Value,
) -> String {
    format!(
        r#"{{"type":{},"partner_id":{},"schema_version":{version},"data":{data}}}"#,
        serde_json::Value::from(event_type),
        serde_json::Value::from(partner),
    )
}

/// The receiver command for an endpoint at `url` signed with `secret`, when
/// the URL is the example receiver's on this machine (`/webhooks` on loopback).
pub fn receiver_command(url: &str, secret: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let loopback = match u.host()? {
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
        url::Host::Domain(d) => d == "localhost",
    };
    if !loopback || u.scheme() != "http" || u.path() != "/webhooks" {
        return None;
    }
    let host = match u.host()? {
        url::Host::Ipv6(ip) => ip.to_string(),
        h => h.to_string(),
    };
    let port = u.port_or_known_default()?;
    Some(format!(
        "WEBHOOK_SECRETS='{secret}' HOST={host} PORT={port} INBOX_DB=inbox.db \\\n  \
         {RUN_RECEIVER}"
    ))
}

/// The `HOOKD_*` variables set in `vars`, by name (never their values).
pub fn hookd_variables(vars: impl Iterator<Item = (String, String)>) -> Vec<String> {
    let mut names: Vec<String> = vars
        .map(|(k, _)| k)
        .filter(|k| k.starts_with("HOOKD_"))
        .collect();
    names.sort();
    names
}

/// A receiver port that is not hookd's own: the example receiver's default
/// (8000) unless hookd listens there.
pub fn receiver_port(hookd_port: u16) -> u16 {
    if hookd_port == 8000 { 8001 } else { 8000 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn egress() -> EgressConfig {
        EgressConfig {
            allow_http: false,
            allowed_ports: vec![443, 8443],
            allow_cidrs: vec![],
            deny_cidrs: vec!["10.9.0.0/16".parse().unwrap()],
            nameservers: vec![],
            extra_ca_file: None,
            proxy: None,
        }
    }

    /// The egress rules of `egress()` widened to dev mode's.
    fn dev_rules() -> crate::egress::url_check::EgressRules {
        let mut dev = egress();
        allow_local(&mut dev);
        crate::egress::url_check::EgressRules::from_config(&dev)
    }

    /// Receivers on this machine and the networks a laptop sits in.
    const LOCAL_RECEIVERS: [&str; 4] = [
        "http://127.0.0.1:9000/webhooks",
        "http://[::1]:3000/",
        "http://192.168.1.20:8000/in",
        "http://10.1.2.3/",
    ];

    #[test]
    fn dev_mode_widened_twice_lists_each_local_range_once() {
        let mut dev = egress();
        allow_local(&mut dev);
        allow_local(&mut dev);
        assert_eq!(
            dev.allow_cidrs.len(),
            LOCAL_CIDRS.len(),
            "applied twice, listed once"
        );
    }

    #[test]
    fn dev_mode_lets_local_receivers_through_that_are_refused_without_it() {
        use crate::egress::url_check::{EgressRules, check_url};
        let strict = EgressRules::from_config(&egress());
        let dev = dev_rules();
        for url in LOCAL_RECEIVERS {
            assert!(
                check_url(url, &strict).is_err(),
                "{url} is refused without --dev"
            );
            assert!(check_url(url, &dev).is_ok(), "{url} is allowed with --dev");
        }
    }

    #[test]
    fn dev_mode_keeps_metadata_addresses_and_denied_ranges_out() {
        use crate::egress::url_check::check_url;
        let dev = dev_rules();
        for url in ["http://169.254.169.254/latest", "http://10.9.1.1/"] {
            assert!(
                check_url(url, &dev).is_err(),
                "{url} stays refused in dev mode"
            );
        }
    }

    #[test]
    fn the_banner_gives_the_dashboard_keys_and_three_commands() {
        let data = serde_json::json!({"final_cost": "1.20"});
        let text = banner(&Banner {
            base: "http://127.0.0.1:8080",
            database: "sqlite://hookd.db",
            operator_key: "hko_op",
            service_key: "hks_svc",
            hookd: "./target/release/hookd",
            variables: &["HOOKD_DATABASE__URL".to_string()],
            receiver_port: 8000,
            sample: ("usage.finalized", 1, &data),
        });
        for wanted in [
            "DEV MODE",
            "http://127.0.0.1:8080/dashboard",
            "operator key  hko_op",
            "./target/release/hookd endpoint create --dev --partner acme --url http://127.0.0.1:8000/webhooks",
            "PORT=8000 INBOX_DB=inbox.db",
            RUN_RECEIVER,
            "Bearer hks_svc",
            r#"{"type":"usage.finalized","partner_id":"acme","schema_version":1,"data":{"#,
            "HOOKD_DATABASE__URL",
        ] {
            assert!(
                text.contains(wanted),
                "the banner lacks `{wanted}`:\n{text}"
            );
        }
    }

    #[test]
    fn a_loopback_webhooks_url_gets_the_receiver_command_with_its_secret() {
        let cmd = receiver_command("http://127.0.0.1:8000/webhooks", "whsec_abc").unwrap();
        assert!(cmd.starts_with("WEBHOOK_SECRETS='whsec_abc' HOST=127.0.0.1 PORT=8000"));
        assert!(receiver_command("https://hooks.example.com/webhooks", "whsec_abc").is_none());
        assert!(receiver_command("http://127.0.0.1:8000/other", "whsec_abc").is_none());
    }

    #[test]
    fn only_hookd_variables_are_named_and_never_their_values() {
        let vars = [
            ("PATH".to_string(), "/bin".to_string()),
            (
                "HOOKD_SECRETS__MASTER_KEY".to_string(),
                "s3cret".to_string(),
            ),
        ];
        let names = hookd_variables(vars.into_iter());
        assert_eq!(names, vec!["HOOKD_SECRETS__MASTER_KEY".to_string()]);
    }

    #[test]
    fn a_shell_word_is_quoted_only_when_it_must_be() {
        assert_eq!(
            shell_word("./target/release/hookd"),
            "./target/release/hookd"
        );
        assert_eq!(shell_word("/my dir/hookd"), "'/my dir/hookd'");
    }
}
