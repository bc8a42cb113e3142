//! Which IP addresses the webhook client may connect to, and why not.
//!
//! [`AddressPolicy::check`] judges one address in this order; the first step that decides wins:
//!
//! 1. **Operator deny list** (`egress.deny_cidrs`) → forbidden.
//! 2. **Cloud metadata endpoints** (`registry::CLOUD_METADATA`) → forbidden *even when an allow
//!    CIDR covers them*. The only way to reach one is to allow that exact host address (`/32` or
//!    `/128`): a broad allow such as `169.254.0.0/16` or `168.63.0.0/16` never unlocks a
//!    metadata service by accident.
//! 3. **Operator allow list** (`egress.allow_cidrs`) → allowed.
//! 4. **Embedded IPv4**: IPv4-mapped (`::ffff:0:0/96`), IPv4-translated (`::ffff:0:0:0/96`) and
//!    NAT64 (`64:ff9b::/96`) addresses are judged as the IPv4 address they carry, through this
//!    same check, so the operator lists apply to that IPv4 too. IPv4-compatible (`::/96`), 6to4
//!    (`2002::/16`) and Teredo (`2001::/32`) are tunnelling forms and are refused outright.
//! 5. **IANA special-purpose registries** (`registry::SPECIAL_PURPOSE`): forbidden unless the
//!    registry marks the block "Globally Reachable"; multicast, reserved, IPv6 site-local and
//!    anything outside IPv6 global unicast (`2000::/3`) are forbidden too.
//!
//! Steps 1 and 2 look both at the address as given and, for the three translation forms of
//! step 4, at the IPv4 it carries: allowing `::ffff:0:0/96` neither gets around a deny entry for
//! `10.0.0.0/8` nor reaches `::ffff:169.254.169.254`.
//!
//! A refusal is shown to partners (at registration, and as a `blocked` attempt's reason): it
//! says what the address is, never the operator's settings. What an operator could change is
//! `egress::remedy`'s business.

mod registry;
#[cfg(test)]
mod registry_tests;
#[cfg(test)]
mod tests;

use std::net::IpAddr;

use ipnet::IpNet;
use registry::{CLOUD_METADATA_ADDRS, GLOBAL_UNICAST, Rule, low_32_bits, special_purpose};

/// Decides which addresses the webhook client may contact. See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    allow: Vec<IpNet>,
    deny: Vec<IpNet>,
}

/// Why an address may not be contacted. Displays as e.g. `10.1.2.3 is private-use (10.0.0.0/8)`;
/// an address on the operator's deny list as `10.1.2.3 is on the operator's deny list`, without
/// the operator's range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ip} is {reason}{}", shown_range(*.kind, .range))]
pub struct Forbidden {
    /// The address that was checked, as given (also when it was judged by an embedded IPv4).
    pub ip: IpAddr,
    /// What the address is, e.g. `"loopback"`, `"cloud metadata"`, `"on the operator's deny list"`.
    pub reason: &'static str,
    /// The range that decided: the registry block, the metadata host, or the operator's deny CIDR.
    pub range: IpNet,
    /// Which step of the check refused it.
    pub kind: ForbiddenKind,
}

/// Which step of [`AddressPolicy::check`] refused an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForbiddenKind {
    /// An entry of `egress.deny_cidrs` (`Forbidden::range`) covers it.
    Denied,
    /// A cloud metadata endpoint, reached only by listing that exact address.
    Metadata,
    /// Not globally reachable (a special-purpose block, or outside IPv6 global unicast); an
    /// entry in `egress.allow_cidrs` opens it.
    NotPublic,
}

impl AddressPolicy {
    /// A policy with the operator's `egress.allow_cidrs` and `egress.deny_cidrs`.
    pub fn new(allow: Vec<IpNet>, deny: Vec<IpNet>) -> Self {
        Self { allow, deny }
    }

    /// Ok if the address may be contacted; Err says why not.
    pub fn check(&self, ip: IpAddr) -> Result<(), Forbidden> {
        use ForbiddenKind::{Denied, Metadata, NotPublic};
        let (rule, range) = special_purpose(ip);
        let carried = (rule == Some(Rule::CarriesV4)).then(|| IpAddr::V4(low_32_bits(ip)));
        let forms = || std::iter::once(ip).chain(carried);
        let forbid = |kind, reason, range| {
            Err(Forbidden {
                ip,
                reason,
                range,
                kind,
            })
        };

        for form in forms() {
            if let Some(net) = self.deny.iter().find(|net| net.contains(&form)) {
                return forbid(Denied, "on the operator's deny list", *net);
            }
        }
        let exactly_allowed = forms().any(|form| self.allow.contains(&IpNet::from(form)));
        if let Some(endpoint) = forms().find(|form| CLOUD_METADATA_ADDRS.contains(form))
            && !exactly_allowed
        {
            return forbid(Metadata, "cloud metadata", IpNet::from(endpoint));
        }
        if self.allow.iter().any(|net| net.contains(&ip)) {
            return Ok(());
        }
        match rule {
            Some(Rule::CarriesV4) => self
                .check(IpAddr::V4(low_32_bits(ip)))
                .map_err(|inner| Forbidden { ip, ..inner }),
            Some(Rule::Forbid(reason)) => forbid(NotPublic, reason, range),
            Some(Rule::Global) => Ok(()),
            None if ip.is_ipv6() && !GLOBAL_UNICAST.contains(&ip) => {
                forbid(NotPublic, "outside IPv6 global unicast", GLOBAL_UNICAST)
            }
            None => Ok(()),
        }
    }
}

/// ` (range)` after the reason, except for the operator's deny list, whose entries are the
/// operator's business; a host range shows as its address, any other range as a CIDR.
fn shown_range(kind: ForbiddenKind, net: &IpNet) -> String {
    match kind {
        ForbiddenKind::Denied => String::new(),
        _ if net.prefix_len() == net.max_prefix_len() => format!(" ({})", net.addr()),
        _ => format!(" ({net})"),
    }
}
