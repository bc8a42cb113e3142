//! Callback URLs: the host parser and the address policy together. The
//! oracle is independent of hookd's code: a short list of ranges that must
//! never be reached, and a resolver-style (`inet_aton`) reading of names.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use hookd::{
    config::Config,
    egress::{
        host::Host,
        url_check::{EgressRules, check_url},
    },
};
use ipnet::IpNet;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

/// Ranges that no callback may reach, whatever the registry says elsewhere.
const NEVER: [&str; 16] = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "::/128",
    "::1/128",
    "fc00::/7",
    "fe80::/10",
    "ff00::/8",
    "::ffff:0:0/96",
    "64:ff9b::/96",
];

fn never(ip: IpAddr) -> bool {
    let mapped = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4),
        IpAddr::V4(_) => None,
    };
    NEVER.iter().any(|net| {
        let net: IpNet = net.parse().expect("a CIDR");
        // Mapped and NAT64 forms are judged as the IPv4 they carry.
        let carried_v4_is_public = match ip {
            IpAddr::V6(v6) if net.to_string().contains(':') && net.contains(&ip) => {
                let o = v6.octets();
                let v4 = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
                (net.to_string() == "::ffff:0:0/96" || net.to_string() == "64:ff9b::/96")
                    && !never(IpAddr::V4(v4))
            }
            _ => false,
        };
        (net.contains(&ip) && !carried_v4_is_public) || mapped.is_some_and(|v4| net.contains(&v4))
    })
}

/// How a C resolver reads a host as IPv4: one to four parts, each decimal,
/// octal (leading 0) or hex (0x), the last part filling the rest.
fn inet_aton(host: &str) -> Option<Ipv4Addr> {
    let host = host.strip_suffix('.').unwrap_or(host);
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut values = Vec::new();
    for part in &parts {
        let (digits, radix) = if let Some(h) = part.strip_prefix("0x").or(part.strip_prefix("0X")) {
            (h, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            (&part[1..], 8)
        } else {
            (*part, 10)
        };
        if digits.is_empty() && radix != 16 {
            return None;
        }
        let value = if digits.is_empty() {
            0
        } else {
            u64::from_str_radix(digits, radix).ok()?
        };
        values.push(value);
    }
    let (last, head) = values.split_last()?;
    if head.iter().any(|v| *v > 255) || *last >= 1u64 << (8 * (4 - head.len())) {
        return None;
    }
    let mut n: u64 = 0;
    for (i, v) in head.iter().enumerate() {
        n |= v << (24 - 8 * i);
    }
    Some(Ipv4Addr::from((n | last) as u32))
}

/// A forbidden IPv4 address.
fn forbidden_v4() -> impl Strategy<Value = Ipv4Addr> {
    prop_oneof![
        (0u8..=255, 0u8..=255, 0u8..=255).prop_map(|(a, b, c)| Ipv4Addr::new(127, a, b, c)),
        (0u8..=255, 0u8..=255, 0u8..=255).prop_map(|(a, b, c)| Ipv4Addr::new(10, a, b, c)),
        (0u8..=255, 0u8..=255).prop_map(|(a, b)| Ipv4Addr::new(192, 168, a, b)),
        (16u8..32, 0u8..=255, 0u8..=255).prop_map(|(a, b, c)| Ipv4Addr::new(172, a, b, c)),
        (0u8..=255, 0u8..=255).prop_map(|(a, b)| Ipv4Addr::new(169, 254, a, b)),
        (0u8..=255, 0u8..=255, 0u8..=255).prop_map(|(a, b, c)| Ipv4Addr::new(0, a, b, c)),
        Just(Ipv4Addr::new(169, 254, 169, 254)),
        Just(Ipv4Addr::UNSPECIFIED),
    ]
}

/// `ip` written as a URL host, in one of the spellings resolvers accept.
fn spell(ip: Ipv4Addr, how: u8, upper: bool) -> String {
    let [a, b, c, d] = ip.octets();
    let n = u32::from(ip);
    let text = match how % 9 {
        0 => format!("{a}.{b}.{c}.{d}"),
        1 => format!("{n}"),
        2 => format!("0x{n:x}"),
        3 => format!("0{n:o}"),
        4 => format!("{a}.{}", n & 0xff_ffff),
        5 => format!("{a}.{b}.{}", n & 0xffff),
        6 => format!("0x{a:x}.0{b:o}.{c}.0x{d:02x}"),
        7 => format!("[::ffff:{a}.{b}.{c}.{d}]"),
        _ => format!("{a}.{b}.{c}.{d}."),
    };
    if upper { text.to_uppercase() } else { text }
}

fn forbidden_url() -> impl Strategy<Value = String> {
    let v6 = prop_oneof![
        Just(Ipv6Addr::LOCALHOST),
        Just(Ipv6Addr::UNSPECIFIED),
        any::<u64>().prop_map(|x| Ipv6Addr::from((0xfd00u128 << 112) | u128::from(x))),
        any::<u64>().prop_map(|x| Ipv6Addr::from((0xfe80u128 << 112) | u128::from(x))),
    ]
    .prop_map(|ip| format!("[{ip}]"));
    let v4 =
        (forbidden_v4(), any::<u8>(), any::<bool>()).prop_map(|(ip, how, up)| spell(ip, how, up));
    (
        prop_oneof![Just("https"), Just("http"), Just("HTTPS")],
        prop_oneof![v4, v6],
        prop_oneof![Just(String::new()), (1u16..).prop_map(|p| format!(":{p}"))],
        "[a-z0-9/?=&%.]{0,20}",
    )
        .prop_map(|(scheme, host, port, path)| format!("{scheme}://{host}{port}/{path}"))
}

fn any_url() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,80}",
        "https?://[a-zA-Z0-9.:\\[\\]@%_-]{0,40}(/[ -~]{0,20})?",
        "https://[0-9xX.]{1,24}/",
    ]
}

pub fn run(runner: &mut TestRunner) -> Result<(), String> {
    let mut config = Config::defaults().egress;
    config.allow_http = true;
    config.allowed_ports = Vec::new();
    let rules = EgressRules::from_config(&config);
    let strategy = prop_oneof![
        forbidden_url().prop_map(|u| (u, true)),
        any_url().prop_map(|u| (u, false))
    ];
    crate::outcome(runner.run(&strategy, |(text, must_refuse)| {
        let checked = check_url(&text, &rules);
        if must_refuse {
            prop_assert!(
                checked.is_err(),
                "a forbidden address was accepted: {checked:?}"
            );
        }
        if let Ok(url) = checked {
            match url.host {
                Host::Ip(ip) => prop_assert!(!never(ip), "{ip} is never to be reached"),
                Host::Name(name) => prop_assert!(
                    inet_aton(&name).is_none() && name.parse::<IpAddr>().is_err(),
                    "{name} was taken as a name, but a resolver reads it as an address"
                ),
            }
        }
        Ok(())
    }))
}
