//! Which IP addresses the webhook client may connect to, and why not.
//!
//! [`AddressPolicy::check`] judges one address in this order; the first step that decides wins:
//!
//! 1. **Operator deny list** (`egress.deny_cidrs`) → forbidden.
//! 2. **Cloud metadata endpoints** (`CLOUD_METADATA` below) → forbidden *even when an allow CIDR
//!    covers them*. The only way to reach one is to allow that exact host address (`/32` or
//!    `/128`): a broad allow such as `169.254.0.0/16` or `168.63.0.0/16` never unlocks a
//!    metadata service by accident.
//! 3. **Operator allow list** (`egress.allow_cidrs`) → allowed.
//! 4. **Embedded IPv4**: IPv4-mapped (`::ffff:0:0/96`), IPv4-translated (`::ffff:0:0:0/96`) and
//!    NAT64 (`64:ff9b::/96`) addresses are judged as the IPv4 address they carry, through this
//!    same check, so the operator lists apply to that IPv4 too. IPv4-compatible (`::/96`), 6to4
//!    (`2002::/16`) and Teredo (`2001::/32`) are tunnelling forms and are refused outright.
//! 5. **IANA special-purpose registries** (`SPECIAL_PURPOSE` below): forbidden unless the
//!    registry marks the block "Globally Reachable"; multicast, reserved, IPv6 site-local and
//!    anything outside IPv6 global unicast (`2000::/3`) are forbidden too.
//!
//! Steps 1 and 2 look both at the address as given and, for the three translation forms of
//! step 4, at the IPv4 it carries: allowing `::ffff:0:0/96` neither gets around a deny entry for
//! `10.0.0.0/8` nor reaches `::ffff:169.254.169.254`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;
use std::sync::LazyLock;

use ipnet::{IpNet, Ipv6Net};

/// Decides which addresses the webhook client may contact. See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    allow: Vec<IpNet>,
    deny: Vec<IpNet>,
}

/// Why an address may not be contacted. Displays as e.g. `10.1.2.3 is private-use (10.0.0.0/8)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ip} is {reason} ({})", show_net(.range))]
pub struct Forbidden {
    /// The address that was checked, as given (also when it was judged by an embedded IPv4).
    pub ip: IpAddr,
    /// What the address is, e.g. `"loopback"`, `"cloud metadata"`, `"denied by egress.deny_cidrs"`.
    pub reason: &'static str,
    /// The range that decided: the registry block, the metadata host, or the operator's deny CIDR.
    pub range: IpNet,
}

impl AddressPolicy {
    /// A policy with the operator's `egress.allow_cidrs` and `egress.deny_cidrs`.
    pub fn new(allow: Vec<IpNet>, deny: Vec<IpNet>) -> Self {
        Self { allow, deny }
    }

    /// Ok if the address may be contacted; Err says why not.
    pub fn check(&self, ip: IpAddr) -> Result<(), Forbidden> {
        let (rule, range) = special_purpose(ip);
        let carried = (rule == Some(CarriesV4)).then(|| IpAddr::V4(low_32_bits(ip)));
        let forms = || std::iter::once(ip).chain(carried);
        let forbid = |reason, range| Err(Forbidden { ip, reason, range });

        for form in forms() {
            if let Some(net) = self.deny.iter().find(|net| net.contains(&form)) {
                return forbid("denied by egress.deny_cidrs", *net);
            }
        }
        let exactly_allowed = forms().any(|form| self.allow.contains(&IpNet::from(form)));
        if let Some(endpoint) = forms().find(|form| CLOUD_METADATA_ADDRS.contains(form))
            && !exactly_allowed
        {
            return forbid("cloud metadata", IpNet::from(endpoint));
        }
        if self.allow.iter().any(|net| net.contains(&ip)) {
            return Ok(());
        }
        match rule {
            Some(CarriesV4) => self
                .check(IpAddr::V4(low_32_bits(ip)))
                .map_err(|inner| Forbidden { ip, ..inner }),
            Some(Forbid(reason)) => forbid(reason, range),
            Some(Global) => Ok(()),
            None if ip.is_ipv6() && !GLOBAL_UNICAST.contains(&ip) => {
                forbid("outside IPv6 global unicast", GLOBAL_UNICAST)
            }
            None => Ok(()),
        }
    }
}

/// What a registry block means for us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Not globally reachable: refuse, naming the block like this.
    Forbid(&'static str),
    /// Globally reachable exception inside a larger forbidden block.
    Global,
    /// An IPv6 form whose low 32 bits are an IPv4 address; judge that address instead.
    CarriesV4,
}
use Rule::{CarriesV4, Forbid, Global};

/// The special-purpose blocks, most specific first: the first block containing an address decides.
///
/// Sources: IANA IPv4 and IPv6 Special-Purpose Address Registries (column "Globally Reachable"),
/// plus IPv4 multicast (RFC 5771), IPv6 multicast and site-local (RFC 4291, RFC 3879). Blocks the
/// registry marks globally reachable and that sit in no larger forbidden block need no row:
/// 192.31.196.0/24 (AS112-v4), 192.52.193.0/24 (AMT), 192.175.48.0/24 (AS112 direct delegation),
/// 2620:4f:8000::/48 (AS112 direct delegation).
const SPECIAL_PURPOSE: &[(&str, Rule)] = &[
    // IPv4
    ("0.0.0.0/8", Forbid("\"this network\"")),
    ("10.0.0.0/8", Forbid("private-use")),
    ("100.64.0.0/10", Forbid("shared address space")),
    ("127.0.0.0/8", Forbid("loopback")),
    ("169.254.0.0/16", Forbid("link-local")),
    ("172.16.0.0/12", Forbid("private-use")),
    ("192.0.0.0/29", Forbid("IPv4 service continuity prefix")),
    ("192.0.0.8/32", Forbid("IPv4 dummy address")),
    ("192.0.0.9/32", Global),  // Port Control Protocol anycast (RFC 7723)
    ("192.0.0.10/32", Global), // TURN anycast (RFC 8155)
    ("192.0.0.170/31", Forbid("NAT64/DNS64 discovery")),
    ("192.0.0.0/24", Forbid("IETF protocol assignments")),
    ("192.0.2.0/24", Forbid("documentation (TEST-NET-1)")),
    ("192.88.99.2/32", Forbid("6a44 relay anycast")),
    ("192.88.99.0/24", Forbid("6to4 relay anycast (deprecated)")), // RFC 7526
    ("192.168.0.0/16", Forbid("private-use")),
    ("198.18.0.0/15", Forbid("benchmarking")),
    ("198.51.100.0/24", Forbid("documentation (TEST-NET-2)")),
    ("203.0.113.0/24", Forbid("documentation (TEST-NET-3)")),
    ("224.0.0.0/4", Forbid("multicast")),
    ("255.255.255.255/32", Forbid("limited broadcast")),
    ("240.0.0.0/4", Forbid("reserved")),
    // IPv6
    ("::/128", Forbid("unspecified")),
    ("::1/128", Forbid("loopback")),
    ("::ffff:0:0/96", CarriesV4),   // IPv4-mapped (RFC 4291)
    ("::ffff:0:0:0/96", CarriesV4), // IPv4-translated, SIIT (RFC 2765)
    ("64:ff9b::/96", CarriesV4),    // NAT64 well-known prefix (RFC 6052), globally reachable
    ("::/96", Forbid("IPv4-compatible (deprecated)")),
    ("64:ff9b:1::/48", Forbid("local-use IPv4/IPv6 translation")),
    ("100::/64", Forbid("discard-only")),
    ("100:0:0:1::/64", Forbid("dummy IPv6 prefix")), // RFC 9780
    ("2001::/32", Forbid("Teredo")),
    ("2001:1::1/128", Global), // Port Control Protocol anycast (RFC 7723)
    ("2001:1::2/128", Global), // TURN anycast (RFC 8155)
    ("2001:1::3/128", Global), // DNS-SD service registration protocol anycast (RFC 9665)
    ("2001:2::/48", Forbid("benchmarking")),
    ("2001:3::/32", Global),     // AMT (RFC 7450)
    ("2001:4:112::/48", Global), // AS112-v6 (RFC 7535)
    ("2001:10::/28", Forbid("ORCHID (deprecated)")),
    ("2001:20::/28", Global), // ORCHIDv2 (RFC 7343)
    ("2001:30::/28", Global), // Drone Remote ID DETs (RFC 9374)
    ("2001::/23", Forbid("IETF protocol assignments")),
    ("2001:db8::/32", Forbid("documentation")),
    ("2002::/16", Forbid("6to4")),
    ("3fff::/20", Forbid("documentation")),
    ("5f00::/16", Forbid("SRv6 segment identifiers")),
    ("fc00::/7", Forbid("unique-local")),
    ("fe80::/10", Forbid("link-local")),
    ("fec0::/10", Forbid("site-local (deprecated)")),
    ("ff00::/8", Forbid("multicast")),
];

/// Cloud metadata, credential and platform endpoints. Forbidden even inside an allowed CIDR; only an
/// exact host entry (`/32`, `/128`) in the allow list reaches one. Most also sit in a forbidden
/// registry block; this list matters when an operator allows such a block, and for public-looking
/// ones such as Azure's WireServer.
const CLOUD_METADATA: &[&str] = &[
    "169.254.169.254", // instance metadata: AWS, GCP, Azure, OpenStack, DigitalOcean, ...
    "169.254.169.253", // AWS VPC DNS resolver
    "169.254.169.123", // AWS Time Sync
    "169.254.170.2",   // AWS ECS task metadata and credentials
    "169.254.170.23",  // AWS EKS Pod Identity agent (credentials)
    "100.100.100.200", // Alibaba Cloud metadata
    "168.63.129.16",   // Azure WireServer / host agent (public-looking)
    "192.0.0.192",     // Oracle Cloud (OCI) metadata
    "fd00:ec2::254",   // AWS instance metadata (IPv6)
    "fd00:ec2::253",   // AWS VPC DNS resolver (IPv6)
    "fd00:ec2::123",   // AWS Time Sync (IPv6)
    "fd00:ec2::23",    // AWS EKS Pod Identity agent (IPv6)
    "fd20:ce::254",    // GCP metadata (IPv6)
    "fd00:c1::a9fe:a9fe", // reported as a metadata endpoint (IBM Cloud); kept as a precaution
    "fd00:42::42",     // reported as a metadata endpoint; kept as a precaution
];

static SPECIAL_NETS: LazyLock<Vec<(IpNet, Rule)>> = LazyLock::new(|| {
    SPECIAL_PURPOSE
        .iter()
        .map(|&(net, rule)| (parse(net), rule))
        .collect()
});
static CLOUD_METADATA_ADDRS: LazyLock<Vec<IpAddr>> =
    LazyLock::new(|| CLOUD_METADATA.iter().map(|a| parse(a)).collect());
const GLOBAL_UNICAST: IpNet = IpNet::V6(Ipv6Net::new_assert(
    Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0),
    3,
));

fn parse<T: FromStr>(text: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| panic!("egress table entry {text:?} must parse"))
}

/// The first special-purpose block containing `ip` and its rule, if any.
fn special_purpose(ip: IpAddr) -> (Option<Rule>, IpNet) {
    SPECIAL_NETS
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map_or((None, IpNet::from(ip)), |&(net, rule)| (Some(rule), net))
}

fn low_32_bits(ip: IpAddr) -> Ipv4Addr {
    match ip {
        IpAddr::V4(v4) => v4,
        IpAddr::V6(v6) => Ipv4Addr::from_bits(v6.to_bits() as u32),
    }
}

/// A host range shows as its address, any other range as a CIDR.
fn show_net(net: &IpNet) -> String {
    if net.prefix_len() == net.max_prefix_len() {
        net.addr().to_string()
    } else {
        net.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALLOWED: &str = "allowed";
    const METADATA: &str = "cloud metadata";
    const DENIED: &str = "denied by egress.deny_cidrs";

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|net| parse(net)).collect()
    }

    fn policy(allow: &[&str], deny: &[&str]) -> AddressPolicy {
        AddressPolicy::new(nets(allow), nets(deny))
    }

    /// "allowed", or the reason the address is forbidden.
    fn verdict(policy: &AddressPolicy, addr: &str) -> &'static str {
        match policy.check(parse(addr)) {
            Ok(()) => ALLOWED,
            Err(forbidden) => forbidden.reason,
        }
    }

    /// Address, expected verdict ("allowed" or the reason), why.
    type Row = (&'static str, &'static str, &'static str);

    fn assert_table(policy: &AddressPolicy, rows: &[Row]) {
        let wrong: Vec<String> = rows
            .iter()
            .filter_map(|&(addr, expected, why)| {
                let got = verdict(policy, addr);
                (got != expected)
                    .then(|| format!("{addr} should be {expected:?} ({why}) but is {got:?}"))
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{} of {} addresses judged wrongly:\n{}",
            wrong.len(),
            rows.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn ipv4_registry_blocks_are_forbidden_up_to_their_edges() {
        assert_table(&AddressPolicy::default(), IPV4_EDGES);
    }

    const THIS_NET: &str = "\"this network\"";
    const PRIVATE: &str = "private-use";
    const CGNAT: &str = "shared address space";
    const IETF: &str = "IETF protocol assignments";
    #[rustfmt::skip]
    const IPV4_EDGES: &[Row] = &[
        ("0.0.0.0", THIS_NET, "first of 0.0.0.0/8; Linux connects it to localhost"),
        ("0.255.255.255", THIS_NET, "last of 0.0.0.0/8"),
        ("1.0.0.0", ALLOWED, "just above 0.0.0.0/8"),
        ("9.255.255.255", ALLOWED, "just below 10.0.0.0/8"),
        ("10.0.0.0", PRIVATE, "first of 10.0.0.0/8"),
        ("10.255.255.255", PRIVATE, "last of 10.0.0.0/8"),
        ("11.0.0.0", ALLOWED, "just above 10.0.0.0/8"),
        ("100.63.255.255", ALLOWED, "just below 100.64.0.0/10"),
        ("100.64.0.0", CGNAT, "first of 100.64.0.0/10"),
        ("100.127.255.255", CGNAT, "last of 100.64.0.0/10"),
        ("100.128.0.0", ALLOWED, "just above 100.64.0.0/10"),
        ("126.255.255.255", ALLOWED, "just below 127.0.0.0/8"),
        ("127.0.0.0", "loopback", "first of 127.0.0.0/8"),
        ("127.0.0.1", "loopback", "localhost"),
        ("127.255.255.255", "loopback", "last of 127.0.0.0/8"),
        ("128.0.0.0", ALLOWED, "just above 127.0.0.0/8"),
        ("169.253.255.255", ALLOWED, "just below 169.254.0.0/16"),
        ("169.254.0.0", "link-local", "first of 169.254.0.0/16"),
        ("169.254.255.255", "link-local", "last of 169.254.0.0/16"),
        ("169.255.0.0", ALLOWED, "just above 169.254.0.0/16"),
        ("172.15.255.255", ALLOWED, "just below 172.16.0.0/12"),
        ("172.16.0.0", PRIVATE, "first of 172.16.0.0/12"),
        ("172.31.255.255", PRIVATE, "last of 172.16.0.0/12"),
        ("172.32.0.0", ALLOWED, "just above 172.16.0.0/12"),
        ("191.255.255.255", ALLOWED, "just below 192.0.0.0/24"),
        ("192.0.0.0", "IPv4 service continuity prefix", "first of 192.0.0.0/29"),
        ("192.0.0.7", "IPv4 service continuity prefix", "last of 192.0.0.0/29"),
        ("192.0.0.8", "IPv4 dummy address", "192.0.0.8/32 is not globally reachable"),
        ("192.0.0.9", ALLOWED, "PCP anycast 192.0.0.9/32 is globally reachable"),
        ("192.0.0.10", ALLOWED, "TURN anycast 192.0.0.10/32 is globally reachable"),
        ("192.0.0.11", IETF, "back in 192.0.0.0/24 after the anycast exceptions"),
        ("192.0.0.170", "NAT64/DNS64 discovery", "192.0.0.170/32"),
        ("192.0.0.171", "NAT64/DNS64 discovery", "192.0.0.171/32"),
        ("192.0.0.172", IETF, "back in 192.0.0.0/24"),
        ("192.0.0.255", IETF, "last of 192.0.0.0/24"),
        ("192.0.1.0", ALLOWED, "just above 192.0.0.0/24"),
        ("192.0.1.255", ALLOWED, "just below 192.0.2.0/24"),
        ("192.0.2.0", "documentation (TEST-NET-1)", "first of 192.0.2.0/24"),
        ("192.0.2.255", "documentation (TEST-NET-1)", "last of 192.0.2.0/24"),
        ("192.0.3.0", ALLOWED, "just above 192.0.2.0/24"),
        ("192.31.196.1", ALLOWED, "AS112-v4 192.31.196.0/24 is globally reachable"),
        ("192.52.193.1", ALLOWED, "AMT 192.52.193.0/24 is globally reachable"),
        ("192.175.48.1", ALLOWED, "AS112 direct delegation 192.175.48.0/24 is globally reachable"),
        ("192.88.98.255", ALLOWED, "just below 192.88.99.0/24"),
        ("192.88.99.0", "6to4 relay anycast (deprecated)", "first of 192.88.99.0/24"),
        ("192.88.99.1", "6to4 relay anycast (deprecated)", "the former 6to4 relay anycast address"),
        ("192.88.99.2", "6a44 relay anycast", "192.88.99.2/32 is listed as not globally reachable"),
        ("192.88.99.255", "6to4 relay anycast (deprecated)", "last of 192.88.99.0/24"),
        ("192.88.100.0", ALLOWED, "just above 192.88.99.0/24"),
        ("192.167.255.255", ALLOWED, "just below 192.168.0.0/16"),
        ("192.168.0.0", PRIVATE, "first of 192.168.0.0/16"),
        ("192.168.255.255", PRIVATE, "last of 192.168.0.0/16"),
        ("192.169.0.0", ALLOWED, "just above 192.168.0.0/16"),
        ("198.17.255.255", ALLOWED, "just below 198.18.0.0/15"),
        ("198.18.0.0", "benchmarking", "first of 198.18.0.0/15"),
        ("198.19.255.255", "benchmarking", "last of 198.18.0.0/15"),
        ("198.20.0.0", ALLOWED, "just above 198.18.0.0/15"),
        ("198.51.99.255", ALLOWED, "just below 198.51.100.0/24"),
        ("198.51.100.0", "documentation (TEST-NET-2)", "first of 198.51.100.0/24"),
        ("198.51.100.255", "documentation (TEST-NET-2)", "last of 198.51.100.0/24"),
        ("198.51.101.0", ALLOWED, "just above 198.51.100.0/24"),
        ("203.0.112.255", ALLOWED, "just below 203.0.113.0/24"),
        ("203.0.113.0", "documentation (TEST-NET-3)", "first of 203.0.113.0/24"),
        ("203.0.113.255", "documentation (TEST-NET-3)", "last of 203.0.113.0/24"),
        ("203.0.114.0", ALLOWED, "just above 203.0.113.0/24"),
        ("223.255.255.255", ALLOWED, "just below 224.0.0.0/4"),
        ("224.0.0.0", "multicast", "first of 224.0.0.0/4"),
        ("239.255.255.255", "multicast", "last of 224.0.0.0/4"),
        ("240.0.0.0", "reserved", "first of 240.0.0.0/4"),
        ("255.255.255.254", "reserved", "last of 240.0.0.0/4 before broadcast"),
        ("255.255.255.255", "limited broadcast", "255.255.255.255/32"),
    ];

    #[test]
    fn ipv6_registry_blocks_are_forbidden_up_to_their_edges() {
        assert_table(&AddressPolicy::default(), IPV6_EDGES);
    }

    const OUTSIDE: &str = "outside IPv6 global unicast";
    const ORCHID: &str = "ORCHID (deprecated)";
    #[rustfmt::skip]
    const IPV6_EDGES: &[Row] = &[
        ("::", "unspecified", "::/128"),
        ("::1", "loopback", "::1/128"),
        ("::2", "IPv4-compatible (deprecated)", "first of ::/96 after :: and ::1"),
        ("::1:0:0", OUTSIDE, "just above ::/96, and not a mapped address"),
        ("64:ff9b:0:ffff::", OUTSIDE, "inside 64:ff9b::/64 but outside the NAT64 /96"),
        ("64:ff9b:1::", "local-use IPv4/IPv6 translation", "first of 64:ff9b:1::/48"),
        ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use IPv4/IPv6 translation", "last of 64:ff9b:1::/48"),
        ("64:ff9b:2::", OUTSIDE, "just above 64:ff9b:1::/48"),
        ("ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE, "just below 100::/64"),
        ("100::", "discard-only", "first of 100::/64"),
        ("100::ffff:ffff:ffff:ffff", "discard-only", "last of 100::/64"),
        ("100:0:0:1::", "dummy IPv6 prefix", "first of 100:0:0:1::/64"),
        ("100:0:0:1:ffff:ffff:ffff:ffff", "dummy IPv6 prefix", "last of 100:0:0:1::/64"),
        ("100:0:0:2::", OUTSIDE, "just above the dummy prefix"),
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE, "just below 2000::/3"),
        ("2000::", ALLOWED, "first of global unicast 2000::/3"),
        ("2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "just below 2001::/23"),
        ("2001::", "Teredo", "first of 2001::/32"),
        ("2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "Teredo", "last of 2001::/32"),
        ("2001:1::", IETF, "2001:1::/32 outside the anycast exceptions"),
        ("2001:1::1", ALLOWED, "PCP anycast 2001:1::1/128 is globally reachable"),
        ("2001:1::2", ALLOWED, "TURN anycast 2001:1::2/128 is globally reachable"),
        ("2001:1::3", ALLOWED, "DNS-SD SRP anycast 2001:1::3/128 is globally reachable"),
        ("2001:1::4", IETF, "just above the anycast exceptions"),
        ("2001:2::", "benchmarking", "first of 2001:2::/48"),
        ("2001:2:0:ffff:ffff:ffff:ffff:ffff", "benchmarking", "last of 2001:2::/48"),
        ("2001:2:1::", IETF, "just above 2001:2::/48"),
        ("2001:2:ffff:ffff:ffff:ffff:ffff:ffff", IETF, "just below 2001:3::/32"),
        ("2001:3::", ALLOWED, "first of AMT 2001:3::/32, globally reachable"),
        ("2001:3:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "last of AMT 2001:3::/32"),
        ("2001:4::", IETF, "just above AMT"),
        ("2001:4:111:ffff:ffff:ffff:ffff:ffff", IETF, "just below AS112-v6 2001:4:112::/48"),
        ("2001:4:112::", ALLOWED, "first of AS112-v6 2001:4:112::/48, globally reachable"),
        ("2001:4:112:ffff:ffff:ffff:ffff:ffff", ALLOWED, "last of AS112-v6"),
        ("2001:4:113::", IETF, "just above AS112-v6"),
        ("2001:f:ffff:ffff:ffff:ffff:ffff:ffff", IETF, "just below 2001:10::/28"),
        ("2001:10::", ORCHID, "first of 2001:10::/28"),
        ("2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", ORCHID, "last of 2001:10::/28"),
        ("2001:20::", ALLOWED, "first of ORCHIDv2 2001:20::/28, globally reachable"),
        ("2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "last of ORCHIDv2"),
        ("2001:30::", ALLOWED, "first of DRIP DETs 2001:30::/28, globally reachable"),
        ("2001:3f:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "last of DRIP DETs"),
        ("2001:40::", IETF, "just above DRIP DETs, back in 2001::/23"),
        ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", IETF, "last of 2001::/23"),
        ("2001:200::", ALLOWED, "just above 2001::/23"),
        ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "just below 2001:db8::/32"),
        ("2001:db8::", "documentation", "first of 2001:db8::/32"),
        ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation", "last of 2001:db8::/32"),
        ("2001:db9::", ALLOWED, "just above 2001:db8::/32"),
        ("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "just below 2002::/16"),
        ("2002::", "6to4", "first of 2002::/16"),
        ("2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "6to4", "last of 2002::/16"),
        ("2003::", ALLOWED, "just above 2002::/16"),
        ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "just below 3fff::/20"),
        ("3fff::", "documentation", "first of 3fff::/20"),
        ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation", "last of 3fff::/20"),
        ("3fff:1000::", ALLOWED, "just above 3fff::/20"),
        ("3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOWED, "last of 2000::/3"),
        ("4000::", OUTSIDE, "just above 2000::/3"),
        ("5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE, "just below 5f00::/16"),
        ("5f00::", "SRv6 segment identifiers", "first of 5f00::/16"),
        ("5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "SRv6 segment identifiers", "last of 5f00::/16"),
        ("5f01::", OUTSIDE, "just above 5f00::/16"),
        ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE, "just below fc00::/7"),
        ("fc00::", "unique-local", "first of fc00::/7"),
        ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique-local", "last of fc00::/7"),
        ("fe00::", OUTSIDE, "just above fc00::/7"),
        ("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE, "just below fe80::/10"),
        ("fe80::", "link-local", "first of fe80::/10"),
        ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local", "last of fe80::/10"),
        ("fec0::", "site-local (deprecated)", "first of fec0::/10"),
        ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local (deprecated)", "last of fec0::/10"),
        ("ff00::", "multicast", "first of ff00::/8"),
        ("ff02::1", "multicast", "all-nodes"),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast", "last of ff00::/8"),
        ("2620:4f:8000::1", ALLOWED, "AS112 direct delegation 2620:4f:8000::/48 is globally reachable"),
    ];

    #[test]
    fn ordinary_public_addresses_are_allowed() {
        assert_table(&AddressPolicy::default(), PUBLIC);
    }

    #[rustfmt::skip]
    const PUBLIC: &[Row] = &[
        ("8.8.8.8", ALLOWED, "Google public DNS"),
        ("8.8.4.4", ALLOWED, "Google public DNS"),
        ("1.1.1.1", ALLOWED, "Cloudflare public DNS"),
        ("9.9.9.9", ALLOWED, "Quad9"),
        ("140.82.112.3", ALLOWED, "github.com"),
        ("52.94.236.248", ALLOWED, "an AWS public address"),
        ("168.63.129.15", ALLOWED, "next to Azure's WireServer, an ordinary public address"),
        ("168.63.129.17", ALLOWED, "next to Azure's WireServer, an ordinary public address"),
        ("2606:4700::1111", ALLOWED, "Cloudflare public DNS"),
        ("2a00:1450::1", ALLOWED, "Google"),
        ("2001:4860:4860::8888", ALLOWED, "Google public DNS"),
        ("2400:cb00::1", ALLOWED, "APNIC-allocated global unicast"),
        ("2c0f:f248::1", ALLOWED, "AFRINIC-allocated global unicast"),
    ];

    #[test]
    fn embedded_ipv4_is_judged_as_the_ipv4_it_carries_or_refused_outright() {
        assert_table(&AddressPolicy::default(), EMBEDDED);
    }

    #[rustfmt::skip]
    const EMBEDDED: &[Row] = &[
        ("::ffff:127.0.0.1", "loopback", "IPv4-mapped loopback"),
        ("::ffff:7f00:1", "loopback", "IPv4-mapped loopback in hex"),
        ("::ffff:10.0.0.1", "private-use", "IPv4-mapped private"),
        ("::ffff:0.0.0.0", "\"this network\"", "IPv4-mapped 0.0.0.0"),
        ("::ffff:8.8.8.8", ALLOWED, "IPv4-mapped public"),
        ("::ffff:192.0.0.9", ALLOWED, "IPv4-mapped globally reachable exception"),
        ("::ffff:169.254.169.254", METADATA, "IPv4-mapped metadata endpoint"),
        ("::ffff:0:a00:1", "private-use", "IPv4-translated (SIIT) 10.0.0.1"),
        ("::ffff:0:7f00:1", "loopback", "IPv4-translated (SIIT) 127.0.0.1"),
        ("::ffff:0:808:808", ALLOWED, "IPv4-translated (SIIT) 8.8.8.8"),
        ("64:ff9b::10.0.0.1", "private-use", "NAT64 of a private address"),
        ("64:ff9b::127.0.0.1", "loopback", "NAT64 of loopback"),
        ("64:ff9b::169.254.169.254", METADATA, "NAT64 of the metadata endpoint"),
        ("64:ff9b::8.8.8.8", ALLOWED, "NAT64 of a public address"),
        ("::127.0.0.1", "IPv4-compatible (deprecated)", "IPv4-compatible forms are refused outright"),
        ("::8.8.8.8", "IPv4-compatible (deprecated)", "refused even when the IPv4 is public"),
        ("2002:7f00:1::", "6to4", "6to4 of loopback"),
        ("2002:808:808::1", "6to4", "6to4 is a relay mechanism, refused even for a public IPv4"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo", "a Teredo address"),
    ];

    #[test]
    fn cloud_metadata_endpoints_are_forbidden() {
        let rows: Vec<_> = CLOUD_METADATA
            .iter()
            .map(|&addr| (addr, METADATA, "listed in CLOUD_METADATA"))
            .collect();
        assert_table(&AddressPolicy::default(), &rows);
        assert_table(&policy(&["0.0.0.0/0", "::/0"], &[]), &rows);
    }

    #[test]
    fn a_broad_allow_does_not_reach_a_metadata_endpoint_but_an_exact_host_allow_does() {
        let broad = policy(
            &[
                "168.63.0.0/16",
                "169.254.0.0/16",
                "fd00::/8",
                "::ffff:0:0/96",
            ],
            &[],
        );
        #[rustfmt::skip]
        assert_table(&broad, &[
            ("168.63.129.16", METADATA, "Azure WireServer inside an allowed /16"),
            ("169.254.169.254", METADATA, "instance metadata inside an allowed link-local /16"),
            ("::ffff:169.254.169.254", METADATA, "IPv4-mapped metadata inside an allowed ::ffff:0:0/96"),
            ("fd00:ec2::254", METADATA, "AWS IPv6 metadata inside an allowed fd00::/8"),
            ("169.254.1.1", ALLOWED, "ordinary link-local in the allowed /16"),
            ("fd00:ec2::1", ALLOWED, "ordinary unique-local in the allowed fd00::/8"),
        ]);
        let exact = policy(&["168.63.129.16/32", "fd00:ec2::254/128"], &[]);
        #[rustfmt::skip]
        assert_table(&exact, &[
            ("168.63.129.16", ALLOWED, "allowed as an exact /32"),
            ("::ffff:168.63.129.16", ALLOWED, "IPv4-mapped form of the exact /32"),
            ("64:ff9b::168.63.129.16", ALLOWED, "NAT64 form of the exact /32"),
            ("fd00:ec2::254", ALLOWED, "allowed as an exact /128"),
            ("169.254.169.254", METADATA, "not on the allow list at all"),
        ]);
    }

    #[test]
    fn an_operator_allow_opens_a_registry_block_and_its_embedded_forms() {
        let allow_loopback = policy(&["127.0.0.0/8"], &[]);
        #[rustfmt::skip]
        assert_table(&allow_loopback, &[
            ("127.0.0.1", ALLOWED, "127.0.0.0/8 is allowed"),
            ("127.255.255.255", ALLOWED, "127.0.0.0/8 is allowed"),
            ("::ffff:127.0.0.1", ALLOWED, "its IPv4-mapped form follows the IPv4"),
            ("64:ff9b::127.0.0.1", ALLOWED, "its NAT64 form follows the IPv4"),
            ("::1", "loopback", "IPv6 loopback was not allowed"),
            ("::127.0.0.1", "IPv4-compatible (deprecated)", "IPv4-compatible is refused outright"),
            ("2002:7f00:1::", "6to4", "6to4 is refused outright"),
            ("10.0.0.1", "private-use", "other blocks stay forbidden"),
        ]);
        let allow_6to4 = policy(&["2002::/16", "fd12::/16"], &[]);
        #[rustfmt::skip]
        assert_table(&allow_6to4, &[
            ("2002:7f00:1::", ALLOWED, "the operator allowed 2002::/16 itself"),
            ("fd12::1", ALLOWED, "the operator allowed this unique-local /16"),
            ("fd13::1", "unique-local", "just outside the allowed /16"),
        ]);
    }

    #[test]
    fn the_deny_list_wins_over_the_allow_list_and_every_embedded_form() {
        let p = policy(
            &["10.0.0.0/8", "::ffff:0:0/96", "::/0"],
            &["10.1.0.0/16", "8.8.8.8/32", "2606:4700::/32"],
        );
        #[rustfmt::skip]
        assert_table(&p, &[
            ("10.1.2.3", DENIED, "10.1.0.0/16 is denied inside the allowed 10.0.0.0/8"),
            ("10.2.0.1", ALLOWED, "allowed 10.0.0.0/8 outside the denied /16"),
            ("::ffff:10.1.2.3", DENIED, "IPv4-mapped form of a denied address, despite ::ffff:0:0/96 allowed"),
            ("::ffff:0:a01:203", DENIED, "SIIT form of a denied address"),
            ("64:ff9b::10.1.2.3", DENIED, "NAT64 form of a denied address, despite ::/0 allowed"),
            ("8.8.8.8", DENIED, "a public address the operator denied"),
            ("::ffff:8.8.8.8", DENIED, "IPv4-mapped form of a denied public address"),
            ("8.8.4.4", ALLOWED, "public and not denied"),
            ("2606:4700::1111", DENIED, "inside the denied 2606:4700::/32"),
        ]);
    }

    #[test]
    fn a_refusal_reads_as_a_sentence_naming_the_deciding_range() {
        let p = policy(&[], &["10.0.0.0/8"]);
        let said = |addr: &str| p.check(parse(addr)).unwrap_err().to_string();
        assert_eq!(said("127.0.0.1"), "127.0.0.1 is loopback (127.0.0.0/8)");
        assert_eq!(
            said("10.1.2.3"),
            "10.1.2.3 is denied by egress.deny_cidrs (10.0.0.0/8)"
        );
        assert_eq!(
            said("169.254.169.254"),
            "169.254.169.254 is cloud metadata (169.254.169.254)"
        );
        assert_eq!(
            said("::ffff:127.0.0.1"),
            "::ffff:127.0.0.1 is loopback (127.0.0.0/8)"
        );
        assert_eq!(said("2002:7f00:1::"), "2002:7f00:1:: is 6to4 (2002::/16)");
        assert_eq!(
            said("fe::1"),
            "fe::1 is outside IPv6 global unicast (2000::/3)"
        );
        assert_eq!(
            said("255.255.255.255"),
            "255.255.255.255 is limited broadcast (255.255.255.255)"
        );
    }

    #[test]
    fn every_table_row_decides_its_first_or_last_address_so_none_is_shadowed() {
        for (index, &(text, rule)) in SPECIAL_PURPOSE.iter().enumerate() {
            let net: IpNet = parse(text);
            assert_eq!(net, net.trunc(), "{text} has host bits set");
            let decider = |ip: IpAddr| SPECIAL_NETS.iter().position(|(n, _)| n.contains(&ip));
            let decides = [net.network(), net.broadcast()]
                .into_iter()
                .any(|ip| decider(ip) == Some(index));
            assert!(
                decides,
                "{text} ({rule:?}) is shadowed by earlier rows at both ends"
            );
        }
        assert_eq!(CLOUD_METADATA_ADDRS.len(), CLOUD_METADATA.len());
    }

    fn any_ipv4() -> impl Strategy<Value = Ipv4Addr> {
        any::<u32>().prop_map(Ipv4Addr::from_bits)
    }

    proptest! {
        #[test]
        fn translated_forms_get_the_same_verdict_as_their_ipv4(v4 in any_ipv4()) {
            let p = policy(&["198.18.0.0/16"], &["8.8.0.0/16"]);
            let judged = |ip: IpAddr| p.check(ip).map_err(|f| (f.reason, f.range));
            let bits = u128::from(v4.to_bits());
            for prefix in [0xffff_u128 << 32, 0xffff_u128 << 48, 0x64_ff9b_u128 << 96] {
                let v6 = IpAddr::V6(Ipv6Addr::from_bits(prefix | bits));
                prop_assert_eq!(judged(v6), judged(IpAddr::V4(v4)), "{} carries {}", v6, v4);
            }
        }

        #[test]
        fn six_to_four_and_teredo_are_always_refused(low in any::<u128>()) {
            let p = AddressPolicy::default();
            let six_to_four = Ipv6Addr::from_bits((0x2002_u128 << 112) | (low >> 16));
            let teredo = Ipv6Addr::from_bits((0x2001_0000_u128 << 96) | (low >> 32));
            prop_assert_eq!(p.check(six_to_four.into()).map_err(|f| f.reason), Err("6to4"), "{}", six_to_four);
            prop_assert_eq!(p.check(teredo.into()).map_err(|f| f.reason), Err("Teredo"), "{}", teredo);
        }

        #[test]
        fn a_denied_address_is_refused_whatever_is_allowed(bits in any::<u128>(), v4 in any::<bool>(), deny_len in 0u8..=32, allow_len in 0u8..=32) {
            let ip = if v4 { IpAddr::V4(Ipv4Addr::from_bits(bits as u32)) } else { IpAddr::V6(Ipv6Addr::from_bits(bits)) };
            let scale = if v4 { 1 } else { 4 };
            let net = |len: u8| IpNet::new(ip, len * scale).unwrap().trunc();
            let p = AddressPolicy::new(vec![net(allow_len), IpNet::from(ip)], vec![net(deny_len)]);
            prop_assert_eq!(p.check(ip).map_err(|f| f.reason), Err(DENIED), "{} is in deny {}", ip, net(deny_len));
        }
    }
}
