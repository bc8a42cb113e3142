//! The resolver actor: resolves a callback host with hickory (never the
//! system resolver), judges every address by the policy, and answers with the
//! checked set the client may dial, with how long it stays good (the
//! answer's time to live, which hickory's own cache keeps too). One
//! forbidden address refuses the name.

use std::{
    net::IpAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use actix::prelude::*;
use hickory_resolver::{
    TokioResolver,
    config::{ConnectionConfig, NameServerConfig, ResolveHosts, ResolverConfig},
    net::runtime::TokioRuntimeProvider,
};

use super::{
    host::Host,
    policy::{AddressPolicy, Forbidden},
};
use crate::config::EgressConfig;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("DNS lookup of {host} failed: {detail}")]
    Dns { host: String, detail: String },
    #[error("{host} resolves to a forbidden address: {reason}{}", more(.others))]
    Blocked {
        host: String,
        /// The first forbidden address.
        reason: Forbidden,
        /// Any other forbidden addresses the name resolves to.
        others: Vec<Forbidden>,
    },
}

/// ` (and N more forbidden addresses)` when a name has more than one.
fn more(others: &[Forbidden]) -> String {
    match others.len() {
        0 => String::new(),
        1 => " (and 1 more forbidden address)".into(),
        n => format!(" (and {n} more forbidden addresses)"),
    }
}

/// Resolve a host to the addresses the client may dial.
#[derive(Debug, Message)]
#[rtype(result = "Result<Resolved, ResolveError>")]
pub struct Resolve(pub Host);

/// The checked addresses of a host, and until when they may be used
/// without asking again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub addrs: Vec<IpAddr>,
    pub valid_until: Instant,
}

/// How long an IP literal's address stays good: it cannot change, but a
/// bound keeps the arithmetic simple.
const LITERAL_VALID: Duration = Duration::from_secs(24 * 3600);

pub struct ResolverActor {
    resolver: TokioResolver,
    policy: Arc<AddressPolicy>,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot build the DNS resolver: {0}")]
pub struct ResolverSetupError(String);

impl ResolverActor {
    #[allow(
        clippy::disallowed_methods,
        reason = "the resolver actor is the one place names are resolved"
    )]
    pub fn new(
        cfg: &EgressConfig,
        policy: Arc<AddressPolicy>,
    ) -> Result<ResolverActor, ResolverSetupError> {
        let provider = TokioRuntimeProvider::default();
        let mut builder = if cfg.nameservers.is_empty() {
            match TokioResolver::builder(provider.clone()) {
                Ok(b) => b,
                Err(e) => {
                    // Without a readable resolv.conf no name resolves, and
                    // every delivery to a name fails as `dns`; literals still work.
                    tracing::warn!(error = %e, "no system DNS configuration; set egress.nameservers");
                    TokioResolver::builder_with_config(
                        ResolverConfig::from_parts(None, vec![], vec![]),
                        provider,
                    )
                }
            }
        } else {
            let servers = cfg
                .nameservers
                .iter()
                .map(|addr| {
                    let mut udp = ConnectionConfig::udp();
                    udp.port = addr.port();
                    let mut tcp = ConnectionConfig::tcp();
                    tcp.port = addr.port();
                    NameServerConfig::new(addr.ip(), true, vec![udp, tcp])
                })
                .collect();
            TokioResolver::builder_with_config(
                ResolverConfig::from_parts(None, vec![], servers),
                provider,
            )
        };
        let opts = builder.options_mut();
        // The hosts file is the system's idea of names; we resolve by DNS only.
        opts.use_hosts_file = ResolveHosts::Never;
        opts.timeout = Duration::from_secs(3);
        opts.attempts = 2;
        opts.positive_max_ttl = Some(Duration::from_secs(300));
        let resolver = builder
            .build()
            .map_err(|e| ResolverSetupError(e.to_string()))?;
        Ok(ResolverActor { resolver, policy })
    }
}

impl Actor for ResolverActor {
    type Context = Context<Self>;
}

impl Handler<Resolve> for ResolverActor {
    type Result = ResponseFuture<Result<Resolved, ResolveError>>;

    fn handle(&mut self, Resolve(host): Resolve, _: &mut Context<Self>) -> Self::Result {
        let resolver = self.resolver.clone();
        let policy = self.policy.clone();
        Box::pin(async move {
            let (name, addrs, valid_until) = match host {
                Host::Ip(ip) => (ip.to_string(), vec![ip], Instant::now() + LITERAL_VALID),
                Host::Name(name) => {
                    // A trailing dot makes the name absolute: no search domains.
                    let lookup = resolver.lookup_ip(format!("{name}.")).await.map_err(|e| {
                        ResolveError::Dns {
                            host: name.clone(),
                            detail: e.to_string(),
                        }
                    })?;
                    let addrs: Vec<IpAddr> = lookup.iter().collect();
                    (name, addrs, lookup.valid_until())
                }
            };
            if addrs.is_empty() {
                return Err(ResolveError::Dns {
                    host: name,
                    detail: "no addresses".into(),
                });
            }
            let mut forbidden = addrs.iter().filter_map(|ip| policy.check(*ip).err());
            if let Some(reason) = forbidden.next() {
                return Err(ResolveError::Blocked {
                    host: name,
                    reason,
                    others: forbidden.collect(),
                });
            }
            Ok(Resolved { addrs, valid_until })
        })
    }
}
