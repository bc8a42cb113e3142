//! What an operator can change so that the egress rules allow a refused
//! callback URL: every setting it takes at once (plain http, the port, the
//! address), as configuration keys and as the `HOOKD_*` variables that set
//! them, with the lists written out whole (a variable replaces a list).
//!
//! For operator surfaces only: the CLI, the logs. A partner registering an
//! endpoint gets the refusal, which says what is wrong with the URL; the
//! operator's settings, and the ranges they allow or deny, are not theirs to
//! see, and a partner could do nothing with them.

use std::{fmt, net::IpAddr};

use ipnet::IpNet;

use super::{
    policy::{Forbidden, ForbiddenKind},
    resolver::ResolveError,
    url_check::{EgressRules, RegistrationError, UrlError, check_url},
};
use crate::config::EgressConfig;

/// Settings that together allow what was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remedy {
    pub settings: Vec<Setting>,
}

/// One egress setting, at the value that allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    AllowHttp,
    /// The whole list: the ports allowed before, and the one refused.
    AllowedPorts(Vec<u16>),
    /// The whole list: the ranges allowed before, and the refused addresses
    /// each as a host range (`/32`, `/128`).
    AllowCidrs(Vec<IpNet>),
    /// The whole list, without the entries that denied.
    DenyCidrs(Vec<IpNet>),
}

impl Setting {
    /// The key in the `[egress]` section.
    fn field(&self) -> &'static str {
        match self {
            Setting::AllowHttp => "allow_http",
            Setting::AllowedPorts(_) => "allowed_ports",
            Setting::AllowCidrs(_) => "allow_cidrs",
            Setting::DenyCidrs(_) => "deny_cidrs",
        }
    }

    /// The configuration key: `egress.allow_http`.
    pub fn key(&self) -> String {
        format!("egress.{}", self.field())
    }

    /// The value as TOML: `true`, `[443, 8443, 9000]`, `["127.0.0.1/32"]`.
    pub fn value(&self) -> String {
        let list = |items: Vec<String>| format!("[{}]", items.join(", "));
        let quoted = |nets: &[IpNet]| list(nets.iter().map(|n| format!("\"{n}\"")).collect());
        match self {
            Setting::AllowHttp => "true".into(),
            Setting::AllowedPorts(ports) => list(ports.iter().map(u16::to_string).collect()),
            Setting::AllowCidrs(nets) | Setting::DenyCidrs(nets) => quoted(nets),
        }
    }

    /// The environment variable that sets it: `HOOKD_EGRESS__ALLOW_HTTP`.
    pub fn variable(&self) -> String {
        format!("HOOKD_EGRESS__{}", self.field().to_ascii_uppercase())
    }

    /// The variable's assignment as a POSIX shell takes it:
    /// `HOOKD_EGRESS__ALLOWED_PORTS='[443, 8443, 9000]'`.
    pub fn assignment(&self) -> String {
        let value = self.value();
        if value.contains(['[', ' ', '"']) {
            format!("{}='{value}'", self.variable())
        } else {
            format!("{}={value}", self.variable())
        }
    }
}

/// `allow it with `egress.allow_http = true` (`HOOKD_EGRESS__ALLOW_HTTP=true`)`,
/// naming every setting.
impl fmt::Display for Remedy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<String> = self
            .settings
            .iter()
            .map(|s| format!("`{} = {}`", s.key(), s.value()))
            .collect();
        let variables: Vec<String> = self.settings.iter().map(Setting::assignment).collect();
        write!(
            f,
            "allow it with {} (`{}`), for `hookd serve` and the hookd commands alike",
            and_list(&keys),
            variables.join(" ")
        )
    }
}

fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What would allow `url`, and every address in `resolved` (what its name
/// resolved to, when it was refused for one), starting from `egress`. `None`
/// when nothing is refused, or when no egress setting can allow it: a scheme
/// other than http, user-info, a cloud metadata address, a URL that is none.
pub fn for_url(egress: &EgressConfig, url: &str, resolved: &[IpAddr]) -> Option<Remedy> {
    let mut widened = egress.clone();
    if !widen(&mut widened, url, resolved) {
        return None;
    }
    changes(egress, &widened)
}

/// What would allow a URL that registration refused.
pub fn for_registration(
    egress: &EgressConfig,
    url: &str,
    refused: &RegistrationError,
) -> Option<Remedy> {
    match refused {
        RegistrationError::Url(_) => for_url(egress, url, &[]),
        RegistrationError::Resolve(e) => for_url(egress, url, &blocked_addresses(e)),
        RegistrationError::Resolver(_) => None,
    }
}

/// The forbidden addresses a name resolved to; none for a DNS failure.
pub fn blocked_addresses(e: &ResolveError) -> Vec<IpAddr> {
    match e {
        ResolveError::Blocked { reason, others, .. } => std::iter::once(reason)
            .chain(others)
            .map(|f| f.ip)
            .collect(),
        ResolveError::Dns { .. } => Vec::new(),
    }
}

/// What would allow every one of `refused` (each a URL and the addresses its
/// name resolved to) that a setting can allow; how many no setting can.
pub fn for_all<'a>(
    egress: &EgressConfig,
    refused: impl IntoIterator<Item = (&'a str, &'a [IpAddr])>,
) -> (Option<Remedy>, usize) {
    let mut widened = egress.clone();
    let mut beyond = 0;
    for (url, resolved) in refused {
        let mut attempt = widened.clone();
        if widen(&mut attempt, url, resolved) {
            widened = attempt;
        } else {
            beyond += 1;
        }
    }
    (changes(egress, &widened), beyond)
}

/// Widens `egress` one refusal at a time until `url` and `resolved` pass;
/// false if a refusal is one no setting lifts.
fn widen(egress: &mut EgressConfig, url: &str, resolved: &[IpAddr]) -> bool {
    // Each round lifts one refusal: a scheme, a port, an address. The bound
    // only guards against a rule that would not budge.
    for _ in 0..64 {
        let rules = EgressRules::from_config(egress);
        let forbidden = match check_url(url, &rules) {
            Err(UrlError::Scheme(scheme)) if scheme == "http" && !egress.allow_http => {
                egress.allow_http = true;
                continue;
            }
            Err(UrlError::Port(port, _)) => {
                egress.allowed_ports.push(port);
                egress.allowed_ports.sort_unstable();
                continue;
            }
            Err(UrlError::Forbidden(forbidden)) => forbidden,
            Err(_) => return false,
            Ok(_) => match resolved.iter().find_map(|ip| rules.policy.check(*ip).err()) {
                Some(forbidden) => forbidden,
                None => return true,
            },
        };
        if !lift(egress, &forbidden) {
            return false;
        }
    }
    false
}

/// Changes `egress` so the policy no longer refuses this address.
fn lift(egress: &mut EgressConfig, forbidden: &Forbidden) -> bool {
    match forbidden.kind {
        ForbiddenKind::Denied => {
            egress.deny_cidrs.retain(|net| *net != forbidden.range);
            true
        }
        ForbiddenKind::NotPublic => {
            let host = IpNet::from(forbidden.ip);
            if egress.allow_cidrs.contains(&host) {
                return false;
            }
            egress.allow_cidrs.push(host);
            true
        }
        // hookd never suggests opening a metadata service: listing its exact
        // address is possible, and a decision no hint should make for anyone.
        ForbiddenKind::Metadata => false,
    }
}

/// The settings that differ, at their new values; `None` if none do.
fn changes(before: &EgressConfig, after: &EgressConfig) -> Option<Remedy> {
    let mut settings = Vec::new();
    if after.allow_http && !before.allow_http {
        settings.push(Setting::AllowHttp);
    }
    if after.allowed_ports != before.allowed_ports {
        settings.push(Setting::AllowedPorts(after.allowed_ports.clone()));
    }
    if after.allow_cidrs != before.allow_cidrs {
        settings.push(Setting::AllowCidrs(after.allow_cidrs.clone()));
    }
    if after.deny_cidrs != before.deny_cidrs {
        settings.push(Setting::DenyCidrs(after.deny_cidrs.clone()));
    }
    (!settings.is_empty()).then_some(Remedy { settings })
}

#[cfg(test)]
#[path = "remedy_tests.rs"]
mod tests;
