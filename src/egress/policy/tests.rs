//! The policy's own rules on tables of addresses: embedded IPv4, metadata endpoints, the
//! operator's allow and deny lists, and how a refusal reads.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
use proptest::prelude::*;

use super::registry::{CLOUD_METADATA, parse};
use super::*;

pub(super) const ALLOWED: &str = "allowed";
const METADATA: &str = "cloud metadata";
const DENIED: &str = "on the operator's deny list";

pub(super) fn nets(list: &[&str]) -> Vec<IpNet> {
    list.iter().map(|net| parse(net)).collect()
}

pub(super) fn policy(allow: &[&str], deny: &[&str]) -> AddressPolicy {
    AddressPolicy::new(nets(allow), nets(deny))
}

/// "allowed", or the reason the address is forbidden.
pub(super) fn verdict(policy: &AddressPolicy, addr: &str) -> &'static str {
    match policy.check(parse(addr)) {
        Ok(()) => ALLOWED,
        Err(forbidden) => forbidden.reason,
    }
}

/// Address, expected verdict ("allowed" or the reason), why.
pub(super) type Row = (&'static str, &'static str, &'static str);

pub(super) fn assert_table(policy: &AddressPolicy, rows: &[Row]) {
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
fn a_refusal_says_which_step_refused_it() {
    let p = policy(&["169.254.0.0/16"], &["10.1.0.0/16"]);
    let kind = |addr: &str| p.check(parse(addr)).unwrap_err().kind;
    #[rustfmt::skip]
    let rows = [
        ("10.1.2.3", ForbiddenKind::Denied, "in the deny list"),
        ("::ffff:10.1.2.3", ForbiddenKind::Denied, "carries a denied IPv4"),
        ("169.254.169.254", ForbiddenKind::Metadata, "metadata inside an allowed range"),
        ("64:ff9b::169.254.169.254", ForbiddenKind::Metadata, "NAT64 form of metadata"),
        ("127.0.0.1", ForbiddenKind::NotPublic, "loopback"),
        ("::ffff:127.0.0.1", ForbiddenKind::NotPublic, "carries loopback"),
        ("fe::1", ForbiddenKind::NotPublic, "outside IPv6 global unicast"),
    ];
    for (addr, expected, why) in rows {
        assert_eq!(kind(addr), expected, "{addr} ({why})");
    }
}

#[test]
fn a_refusal_reads_as_a_sentence_naming_the_deciding_range_but_not_the_operators_lists() {
    let p = policy(&[], &["10.0.0.0/8"]);
    let said = |addr: &str| p.check(parse(addr)).unwrap_err().to_string();
    assert_eq!(said("127.0.0.1"), "127.0.0.1 is loopback (127.0.0.0/8)");
    assert_eq!(said("10.1.2.3"), "10.1.2.3 is on the operator's deny list");
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
