//! The address registries the policy reads: the IANA special-purpose blocks with what each
//! means for us, and the cloud metadata endpoints; both as tables, parsed once.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;
use std::sync::LazyLock;

use ipnet::{IpNet, Ipv6Net};

/// What a registry block means for us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rule {
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
pub(super) const SPECIAL_PURPOSE: &[(&str, Rule)] = &[
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
pub(super) const CLOUD_METADATA: &[&str] = &[
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

pub(super) static SPECIAL_NETS: LazyLock<Vec<(IpNet, Rule)>> = LazyLock::new(|| {
    SPECIAL_PURPOSE
        .iter()
        .map(|&(net, rule)| (parse(net), rule))
        .collect()
});
pub(super) static CLOUD_METADATA_ADDRS: LazyLock<Vec<IpAddr>> =
    LazyLock::new(|| CLOUD_METADATA.iter().map(|a| parse(a)).collect());
pub(super) const GLOBAL_UNICAST: IpNet = IpNet::V6(Ipv6Net::new_assert(
    Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0),
    3,
));

pub(super) fn parse<T: FromStr>(text: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| panic!("egress table entry {text:?} must parse"))
}

/// The first special-purpose block containing `ip` and its rule, if any.
pub(super) fn special_purpose(ip: IpAddr) -> (Option<Rule>, IpNet) {
    SPECIAL_NETS
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map_or((None, IpNet::from(ip)), |&(net, rule)| (Some(rule), net))
}

pub(super) fn low_32_bits(ip: IpAddr) -> Ipv4Addr {
    match ip {
        IpAddr::V4(v4) => v4,
        IpAddr::V6(v6) => Ipv4Addr::from_bits(v6.to_bits() as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
