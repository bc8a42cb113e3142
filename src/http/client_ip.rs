//! Which address a request comes from, for per-address limits: the peer,
//! unless the peer is a proxy named in `http.trust_proxy`; then the nearest
//! address in `X-Forwarded-For` (or `Forwarded: for=`) that is not one of
//! those proxies. A client can write anything in those headers, so they
//! are read only from a trusted proxy and only from the right, where the
//! trusted proxies appended.

use std::net::IpAddr;

use actix_web::{dev::RequestHead, http::header::HeaderMap};
use ipnet::IpNet;

use super::door::gate::canonical;

fn trusted(address: IpAddr, proxies: &[IpNet]) -> bool {
    proxies.iter().any(|net| net.contains(&address))
}

/// One `for=` element of `Forwarded`, or one `X-Forwarded-For` entry, as an
/// address: `192.0.2.1`, `"[2001:db8::1]:4711"`, `192.0.2.1:80`.
fn parse_hop(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(rest) = text.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    text.rsplit_once(':')?.0.parse().ok()
}

/// The hops a request passed, nearest last, from the forwarding headers.
/// With both `X-Forwarded-For` and `Forwarded` present, one of them may be
/// the client's own, passed through by a proxy that writes the other: then
/// neither is believed (no hops).
fn hops(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    if headers.contains_key("x-forwarded-for") && headers.contains_key("forwarded") {
        return Vec::new();
    }
    let xff: Vec<_> = headers
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(parse_hop)
        .collect();
    if !xff.is_empty() {
        return xff;
    }
    headers
        .get_all("forwarded")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                name.trim()
                    .eq_ignore_ascii_case("for")
                    .then(|| parse_hop(value))
            })
        })
        .collect()
}

/// The client address of `peer` given the hops it reports (nearest last).
pub fn resolve(peer: IpAddr, hops: &[Option<IpAddr>], proxies: &[IpNet]) -> IpAddr {
    let peer = canonical(peer);
    if !trusted(peer, proxies) {
        return peer;
    }
    let mut client = peer;
    for hop in hops.iter().rev() {
        match hop {
            Some(address) => {
                client = canonical(*address);
                if !trusted(client, proxies) {
                    break;
                }
            }
            // An unreadable hop: stop at the last address we could trust.
            None => break,
        }
    }
    client
}

/// The budget key of an address: IPv6 clients by their /64 (one subscriber
/// holds a whole /64), IPv4 clients by their address.
pub fn budget_key(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}

/// The client address of a request, from its head.
pub fn of(head: &RequestHead, proxies: &[IpNet]) -> Option<IpAddr> {
    let peer = head.peer_addr?.ip();
    if proxies.is_empty() {
        return Some(canonical(peer));
    }
    Some(resolve(peer, &hops(&head.headers), proxies))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(t: &str) -> IpAddr {
        t.parse().expect("an address")
    }

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().expect("a CIDR")).collect()
    }

    #[test]
    fn forwarding_headers_from_an_untrusted_peer_are_ignored() {
        let hops = [Some(ip("203.0.113.9"))];
        assert_eq!(resolve(ip("198.51.100.7"), &hops, &[]), ip("198.51.100.7"));
        assert_eq!(
            resolve(ip("198.51.100.7"), &hops, &nets(&["10.0.0.0/8"])),
            ip("198.51.100.7")
        );
    }

    #[test]
    fn behind_a_trusted_proxy_the_nearest_untrusted_hop_is_the_client() {
        let proxies = nets(&["10.0.0.0/8"]);
        // The client forged the first entry; the proxy appended the real one.
        let hops = [
            Some(ip("1.2.3.4")),
            Some(ip("203.0.113.9")),
            Some(ip("10.0.0.2")),
        ];
        assert_eq!(resolve(ip("10.0.0.1"), &hops, &proxies), ip("203.0.113.9"));
    }

    #[test]
    fn an_ipv6_client_is_budgeted_by_its_64() {
        assert_eq!(
            budget_key(ip("2001:db8:1:2:aaaa::1")),
            budget_key(ip("2001:db8:1:2:bbbb::9"))
        );
        assert_ne!(
            budget_key(ip("2001:db8:1:2::1")),
            budget_key(ip("2001:db8:1:3::1"))
        );
        assert_eq!(budget_key(ip("192.0.2.7")), "192.0.2.7");
    }

    #[test]
    fn hops_are_read_in_each_spelling() {
        assert_eq!(parse_hop(" 192.0.2.1"), Some(ip("192.0.2.1")));
        assert_eq!(parse_hop("\"[2001:db8::1]:4711\""), Some(ip("2001:db8::1")));
        assert_eq!(parse_hop("192.0.2.1:80"), Some(ip("192.0.2.1")));
        assert_eq!(parse_hop("unknown"), None);
        assert_eq!(parse_hop("_hidden"), None);
    }
}
