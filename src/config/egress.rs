//! The `[egress]` section: where deliveries may go (schemes, ports, CIDRs
//! allowed and denied beyond the address policy), which DNS servers and which
//! extra CA certificates, and the proxy every request leaves through.

use std::{net::SocketAddr, path::PathBuf};

use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::{
    ConfigError, cidrs, invalid,
    proxy::{ProxyUrl, RawProxy},
};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEgress {
    allow_http: bool,
    allowed_ports: Vec<u16>,
    allow_cidrs: Vec<String>,
    deny_cidrs: Vec<String>,
    nameservers: Vec<String>,
    extra_ca_file: String,
    proxy: RawProxy,
}

#[derive(Debug, Clone)]
pub struct EgressConfig {
    pub allow_http: bool,
    pub allowed_ports: Vec<u16>,
    pub allow_cidrs: Vec<IpNet>,
    pub deny_cidrs: Vec<IpNet>,
    pub nameservers: Vec<SocketAddr>,
    pub extra_ca_file: Option<PathBuf>,
    /// The proxy every outbound request tunnels through; `None`: direct.
    pub proxy: Option<ProxyUrl>,
}

impl RawEgress {
    pub(super) fn validate(self) -> Result<EgressConfig, ConfigError> {
        let e = self;
        let nameservers = e
            .nameservers
            .iter()
            .map(|s| {
                s.parse::<SocketAddr>()
                    .map_err(|_| invalid("egress.nameservers", format!("`{s}` is not an ip:port")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if e.allowed_ports.contains(&0) {
            return Err(invalid("egress.allowed_ports", "0 is not a port"));
        }
        Ok(EgressConfig {
            allow_http: e.allow_http,
            allowed_ports: e.allowed_ports,
            allow_cidrs: cidrs("egress.allow_cidrs", &e.allow_cidrs)?,
            deny_cidrs: cidrs("egress.deny_cidrs", &e.deny_cidrs)?,
            nameservers,
            extra_ca_file: (!e.extra_ca_file.is_empty()).then(|| PathBuf::from(e.extra_ca_file)),
            proxy: e
                .proxy
                .validate()
                .map_err(|e| invalid("egress.proxy", e.to_string()))?,
        })
    }
}
