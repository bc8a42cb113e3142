//! Callback URL rules, one function for every place a URL enters (CLI, API)
//! and for delivery time: scheme, port, no user-info, and a host that is a
//! DNS name or an IP literal the address policy allows.

use std::sync::Arc;

use super::{
    host::{Host, HostError, parse_host},
    policy::{AddressPolicy, Forbidden},
};
use crate::config::EgressConfig;

/// The egress rules from configuration, shared by registration and delivery.
#[derive(Debug, Clone)]
pub struct EgressRules {
    pub policy: Arc<AddressPolicy>,
    pub allow_http: bool,
    /// Empty: any port.
    pub allowed_ports: Vec<u16>,
}

impl EgressRules {
    pub fn from_config(c: &EgressConfig) -> EgressRules {
        EgressRules {
            policy: Arc::new(AddressPolicy::new(
                c.allow_cidrs.clone(),
                c.deny_cidrs.clone(),
            )),
            allow_http: c.allow_http,
            allowed_ports: c.allowed_ports.clone(),
        }
    }
}

/// A callback URL that passed the rules; its host is still to be resolved
/// (names) at connection time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackUrl {
    pub url: url::Url,
    pub host: Host,
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("is not a URL: {0}")]
    Parse(String),
    #[error("must use https (plain http is not allowed here), got `{0}`")]
    Scheme(String),
    #[error("must not contain a user name or password")]
    UserInfo,
    #[error("port {0} is not allowed (allowed: {1})")]
    Port(u16, String),
    #[error("{0}")]
    Host(#[from] HostError),
    #[error("points to a forbidden address: {0}")]
    Forbidden(#[from] Forbidden),
    #[error("is longer than 2048 characters")]
    TooLong,
}

/// Checks a callback URL without resolving it.
pub fn check_url(text: &str, rules: &EgressRules) -> Result<CallbackUrl, UrlError> {
    if text.len() > 2048 {
        return Err(UrlError::TooLong);
    }
    let url = url::Url::parse(text.trim()).map_err(|e| UrlError::Parse(e.to_string()))?;
    match url.scheme() {
        "https" => {}
        "http" if rules.allow_http => {}
        other => return Err(UrlError::Scheme(other.to_string())),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlError::UserInfo);
    }
    let port = url.port_or_known_default().unwrap_or(443);
    if !rules.allowed_ports.is_empty() && !rules.allowed_ports.contains(&port) {
        let allowed = rules
            .allowed_ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(UrlError::Port(port, allowed));
    }
    let host = parse_host(&url)?;
    if let Host::Ip(ip) = host {
        rules.policy.check(ip)?;
    }
    Ok(CallbackUrl { url, host, port })
}

/// The registration check: the rules, then the name resolved and every
/// address judged. The same check runs again at every connection.
pub async fn check_registration(
    text: &str,
    rules: &EgressRules,
    resolver: &actix::Addr<super::resolver::ResolverActor>,
) -> Result<CallbackUrl, RegistrationError> {
    let url = check_url(text, rules)?;
    if let Host::Name(_) = url.host {
        resolver
            .send(super::resolver::Resolve(url.host.clone()))
            .await
            .map_err(|e| RegistrationError::Resolver(e.to_string()))??;
    }
    Ok(url)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    #[error("the URL {0}")]
    Url(#[from] UrlError),
    #[error("the URL's host {0}")]
    Resolve(#[from] super::resolver::ResolveError),
    #[error("the resolver is not running: {0}")]
    Resolver(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow_http: bool, allow: &[&str]) -> EgressRules {
        EgressRules {
            policy: Arc::new(AddressPolicy::new(
                allow.iter().map(|c| c.parse().unwrap()).collect(),
                vec![],
            )),
            allow_http,
            allowed_ports: vec![443, 8443],
        }
    }

    #[test]
    fn a_public_https_url_passes() {
        let u = check_url("https://hooks.example.com/in", &rules(false, &[])).expect("valid");
        assert_eq!(u.host, Host::Name("hooks.example.com".into()));
        assert_eq!(u.port, 443);
    }

    #[test]
    fn plain_http_needs_configuration() {
        assert!(matches!(
            check_url("http://hooks.example.com/", &rules(false, &[])),
            Err(UrlError::Scheme(_))
        ));
        assert!(check_url("http://hooks.example.com:8443/", &rules(true, &[])).is_ok());
        assert!(matches!(
            check_url("ftp://hooks.example.com/", &rules(true, &[])),
            Err(UrlError::Scheme(_))
        ));
    }

    #[test]
    fn user_info_and_odd_ports_are_refused() {
        assert_eq!(
            check_url("https://a:b@example.com/", &rules(false, &[])),
            Err(UrlError::UserInfo)
        );
        assert!(matches!(
            check_url("https://example.com:22/", &rules(false, &[])),
            Err(UrlError::Port(22, _))
        ));
        assert!(check_url("https://example.com:8443/", &rules(false, &[])).is_ok());
    }

    #[test]
    fn loopback_literals_in_any_spelling_are_refused_unless_allowed() {
        for url in [
            "https://127.0.0.1/",
            "https://127.1/",
            "https://2130706433/",
            "https://0x7f000001/",
            "https://[::ffff:127.0.0.1]/",
        ] {
            assert!(
                matches!(
                    check_url(url, &rules(false, &[])),
                    Err(UrlError::Forbidden(_))
                ),
                "{url} must be refused"
            );
            assert!(
                check_url(url, &rules(false, &["127.0.0.0/8"])).is_ok(),
                "{url} is allowed once 127/8 is"
            );
        }
    }
}
