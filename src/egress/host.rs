//! A callback URL's host as we see it: an IP in any spelling a resolver accepts, or a DNS name.
//!
//! What `url::Url::parse` already does for the special schemes (`http`, `https`, `ws`, `wss`,
//! `ftp`, `file`), per the WHATWG URL standard: percent-decodes the host, maps it through IDNA
//! (UTS #46: case folding, full-width digits and `。` dots, punycode), lowercases it, and reads
//! every IPv4 spelling `inet_aton` accepts (`127.1`, `127.0.1`, `2130706433`, `0x7f000001`,
//! `0x7f.1`, `017700000001`, `0177.0.0.1`, a trailing dot) into `Host::Ipv4`. A name whose
//! last label is a number but no valid IPv4 (`1.2.3.256`, `09.1`, `1.2.3.4.5`) fails to parse
//! at all. Bracketed IPv6 becomes `Host::Ipv6`; zone ids are refused.
//!
//! What it leaves to us: a trailing dot on names (`example.com.` stays `Domain("example.com.")`),
//! names that are not DNS names (`a*b.example`, `a..b`), names that merely look numeric
//! (`1e10`, `0x1g`, `1.2.3.4..`), and the host of any other scheme, which stays an opaque,
//! percent-encoded, case-preserving string (`hook://%31%32%37.0.0.1/`, `hook://0x7f.1/`).
//! [`parse_host`] gives every URL the special-scheme treatment, then finishes the job.

use std::net::IpAddr;

/// A callback URL's host.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// An IP literal. IPv4-mapped IPv6 (`[::ffff:127.0.0.1]`) is given as the IPv4 it maps.
    Ip(IpAddr),
    /// A DNS name: lowercase ASCII (IDNA as punycode), no trailing dot, letters, digits, `-`, `_`.
    Name(String),
}

/// Why a URL's host is not one we will resolve or connect to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("the URL has no host")]
    Missing,
    #[error("the host {host:?} cannot be parsed: {error}")]
    Unparseable {
        host: String,
        error: url::ParseError,
    },
    #[error(
        "the host {host:?} looks like a number but is no IPv4 address in any spelling; refusing to guess how a resolver reads it"
    )]
    AmbiguousNumeric { host: String },
    #[error("the host {host:?} is not a DNS name: {reason}")]
    NotDnsName { host: String, reason: &'static str },
}

/// Interprets a URL's host.
///
/// IPv4 literals in every spelling a system resolver (`inet_aton`) would accept are recognised as
/// IPs, for any scheme; bracketed IPv6 is an IP too, with IPv4-mapped addresses unmapped.
/// Percent-encoding is decoded, IDNA names become punycode, a single trailing dot is removed.
/// A name whose last label starts with a digit (no top-level domain does) but which is no valid
/// IPv4 in any spelling is [`HostError::AmbiguousNumeric`], never a [`Host::Name`].
/// Userinfo and port are not looked at.
pub fn parse_host(url: &url::Url) -> Result<Host, HostError> {
    let host = match url.host() {
        None => return Err(HostError::Missing),
        Some(url::Host::Ipv4(v4)) => return Ok(Host::Ip(IpAddr::V4(v4))),
        Some(url::Host::Ipv6(v6)) => return Ok(Host::Ip(IpAddr::V6(v6).to_canonical())),
        Some(url::Host::Domain("")) => return Err(HostError::Missing),
        Some(url::Host::Domain(host)) => host,
    };
    // Already done for special schemes (and idempotent there); for the opaque host of any other
    // scheme this percent-decodes, applies IDNA and reads IPv4 spellings as http would.
    match url::Host::parse(host) {
        Ok(url::Host::Ipv4(v4)) => Ok(Host::Ip(IpAddr::V4(v4))),
        Ok(url::Host::Ipv6(v6)) => Ok(Host::Ip(IpAddr::V6(v6).to_canonical())),
        Ok(url::Host::Domain(name)) => dns_name(name),
        Err(url::ParseError::InvalidIpv4Address) => Err(HostError::AmbiguousNumeric {
            host: host.to_owned(),
        }),
        Err(error) => Err(HostError::Unparseable {
            host: host.to_owned(),
            error,
        }),
    }
}

/// Checks a normalised (IDNA-mapped, lowercase) domain and removes its trailing dot.
fn dns_name(domain: String) -> Result<Host, HostError> {
    let name = domain.strip_suffix('.').unwrap_or(&domain);
    let last_label = name
        .trim_end_matches('.')
        .rsplit('.')
        .next()
        .unwrap_or_default();
    if last_label.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(HostError::AmbiguousNumeric { host: domain });
    }
    let problem = if name.len() > 253 {
        Some("longer than 253 characters")
    } else if name.split('.').any(str::is_empty) {
        Some("it has an empty label")
    } else if name.split('.').any(|label| label.len() > 63) {
        Some("a label is longer than 63 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        Some("only letters, digits, '-' and '_' may appear in a label")
    } else {
        None
    };
    match problem {
        Some(reason) => Err(HostError::NotDnsName {
            host: domain,
            reason,
        }),
        None => Ok(Host::Name(name.to_ascii_lowercase())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn host_of(url: &str) -> Result<Host, HostError> {
        let parsed =
            url::Url::parse(url).unwrap_or_else(|e| panic!("{url} should parse as a URL: {e}"));
        parse_host(&parsed)
    }

    fn name(name: &str) -> Result<Host, HostError> {
        Ok(Host::Name(name.to_owned()))
    }

    const LOCALHOST_V4: Result<Host, HostError> = Ok(Host::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST)));

    #[test]
    fn every_spelling_of_127_0_0_1_is_that_ip_for_http_and_for_other_schemes_alike() {
        let spellings = [
            ("127.0.0.1", "dotted decimal"),
            ("127.1", "two parts: the last fills 24 bits"),
            ("127.0.1", "three parts: the last fills 16 bits"),
            ("2130706433", "one decimal number"),
            ("0x7f000001", "one hex number"),
            ("0X7F000001", "one hex number, upper case"),
            ("0x7f.1", "hex first part"),
            ("0x7f.0x0.0x0.0x1", "all parts hex"),
            ("017700000001", "one octal number"),
            ("0177.0.0.1", "octal first part"),
            ("0000177.0.0.1", "octal with extra leading zeros"),
            ("127.0.0.1.", "trailing dot"),
            ("2130706433.", "one number with a trailing dot"),
            ("%31%32%37.0.0.1", "percent-encoded digits"),
            ("127%2E0%2E0%2E1", "percent-encoded dots"),
            (
                "\u{ff11}\u{ff12}\u{ff17}.0.0.1",
                "full-width digits, mapped by IDNA",
            ),
            (
                "127\u{3002}0\u{3002}0\u{3002}1",
                "ideographic full stops, mapped by IDNA",
            ),
            ("[::ffff:127.0.0.1]", "IPv4-mapped IPv6, dotted"),
            ("[::ffff:7f00:1]", "IPv4-mapped IPv6, hex"),
            ("[0:0:0:0:0:ffff:7f00:1]", "IPv4-mapped IPv6, written out"),
        ];
        for scheme in ["http", "https", "hookd"] {
            for (host, why) in spellings {
                let url = format!("{scheme}://{host}/callback");
                assert_eq!(
                    host_of(&url),
                    LOCALHOST_V4,
                    "{url}: {why} should be read as 127.0.0.1"
                );
            }
        }
    }

    #[test]
    fn names_come_out_lowercase_punycoded_and_without_the_trailing_dot() {
        let table = [
            (
                "http://LOCALHOST./",
                "localhost",
                "upper case and a trailing dot",
            ),
            ("https://example.com./", "example.com", "a trailing dot"),
            (
                "https://Example.COM:8443/x",
                "example.com",
                "mixed case, with a port",
            ),
            (
                "https://bücher.example/",
                "xn--bcher-kva.example",
                "IDNA to punycode",
            ),
            (
                "https://B%C3%BCcher.example/",
                "xn--bcher-kva.example",
                "percent-encoded UTF-8, then IDNA",
            ),
            (
                "https://xn--bcher-kva.example/",
                "xn--bcher-kva.example",
                "already punycode",
            ),
            (
                "https://user:secret@hooks.example.com/",
                "hooks.example.com",
                "userinfo is not part of the host",
            ),
            (
                "https://_acme.example.com/",
                "_acme.example.com",
                "underscores occur in real names",
            ),
            (
                "https://1e100.net/",
                "1e100.net",
                "digits first in a label, but the last label is a word",
            ),
            (
                "https://1.2.3.de/",
                "1.2.3.de",
                "numeric labels under a real top-level domain",
            ),
            (
                "https://deadbeef/",
                "deadbeef",
                "hex letters without 0x are no number to inet_aton",
            ),
            (
                "hookd://Hooks.Example.COM./",
                "hooks.example.com",
                "other schemes get the same treatment",
            ),
            (
                "hookd://b%C3%BCcher.example/",
                "xn--bcher-kva.example",
                "other schemes: percent-decoding and IDNA",
            ),
        ];
        for (url, expected, why) in table {
            assert_eq!(
                host_of(url),
                name(expected),
                "{url}: {why} should give the name {expected}"
            );
        }
    }

    #[test]
    fn ipv6_literals_are_ips_and_only_mapped_ones_turn_into_ipv4() {
        let table = [
            ("http://[::1]/", "::1", "IPv6 loopback stays IPv6"),
            (
                "http://[2606:4700::1111]:8443/",
                "2606:4700::1111",
                "a port does not matter",
            ),
            (
                "http://[64:ff9b::7f00:1]/",
                "64:ff9b::7f00:1",
                "NAT64 is left to the address policy",
            ),
            (
                "http://[::127.0.0.1]/",
                "::7f00:1",
                "IPv4-compatible is left to the address policy",
            ),
            (
                "http://[::ffff:8.8.8.8]/",
                "8.8.8.8",
                "IPv4-mapped is the IPv4 it maps",
            ),
            (
                "hookd://[::ffff:10.0.0.1]/",
                "10.0.0.1",
                "also for other schemes",
            ),
        ];
        for (url, expected, why) in table {
            let expected: IpAddr = expected.parse().unwrap();
            assert_eq!(host_of(url), Ok(Host::Ip(expected)), "{url}: {why}");
        }
    }

    #[test]
    fn names_that_look_numeric_but_are_no_ipv4_are_refused_as_ambiguous() {
        let table = [
            ("https://1e10/", "a decimal exponent is no IPv4 spelling"),
            ("https://0x1g/", "not a hex number"),
            ("https://1.2.3.4../", "two trailing dots"),
            (
                "https://example.123abc/",
                "no top-level domain starts with a digit",
            ),
            ("hookd://1.2.3.256/", "an octet above 255"),
            ("hookd://09.1/", "9 is no octal digit"),
            ("hookd://1.2.3.4.5/", "five parts"),
            ("hookd://4294967296/", "above 32 bits"),
            ("hookd://1e10/", "other schemes too"),
        ];
        for (url, why) in table {
            let got = host_of(url);
            assert!(
                matches!(got, Err(HostError::AmbiguousNumeric { .. })),
                "{url} should be ambiguous ({why}), got {got:?}"
            );
        }
    }

    #[test]
    fn http_refuses_malformed_numeric_hosts_before_we_see_them() {
        for url in [
            "http://1.2.3.256/",
            "http://09.1/",
            "http://1.2.3.4.5/",
            "http://4294967296/",
            "http://a.b.1/",
        ] {
            assert!(
                url::Url::parse(url).is_err(),
                "{url} should already fail url::Url::parse"
            );
        }
    }

    #[test]
    fn hosts_that_are_no_dns_names_are_refused() {
        let table = [
            ("https://a*b.example/", "a '*' is no hostname character"),
            ("https://a!b.example/", "a '!' is no hostname character"),
            ("https://a..b.example/", "an empty label"),
            (
                "https://example.com../",
                "an empty label before the trailing dot",
            ),
            ("https://./", "nothing but a dot"),
            ("hookd://a%2Ab.example/", "a percent-encoded '*'"),
        ];
        for (url, why) in table {
            let got = host_of(url);
            assert!(
                matches!(got, Err(HostError::NotDnsName { .. })),
                "{url} should be no DNS name ({why}), got {got:?}"
            );
        }
        let long_label = format!("https://{}.example/", "a".repeat(64));
        assert!(
            matches!(host_of(&long_label), Err(HostError::NotDnsName { .. })),
            "a 64-character label is too long"
        );
        let long_name = format!("https://{}example/", "abcdefghi.".repeat(25));
        assert!(
            matches!(host_of(&long_name), Err(HostError::NotDnsName { .. })),
            "a 257-character name is too long"
        );
        let longest = format!("https://{}.example/", "a".repeat(63));
        assert!(
            matches!(host_of(&longest), Ok(Host::Name(_))),
            "a 63-character label is fine"
        );
    }

    #[test]
    fn urls_without_a_usable_host_say_so() {
        assert_eq!(
            host_of("hookd:///path"),
            Err(HostError::Missing),
            "an empty authority has no host"
        );
        assert_eq!(
            host_of("mailto:hooks@example.com"),
            Err(HostError::Missing),
            "mailto has no host"
        );
        let got = host_of("hookd://%C0%AE/");
        assert!(
            matches!(got, Err(HostError::Unparseable { .. })),
            "invalid UTF-8 after decoding should be unparseable, got {got:?}"
        );
    }

    #[test]
    fn errors_read_clearly() {
        assert_eq!(
            host_of("https://1e10/").unwrap_err().to_string(),
            "the host \"1e10\" looks like a number but is no IPv4 address in any spelling; refusing to guess how a resolver reads it"
        );
        assert_eq!(
            host_of("https://a*b.example/").unwrap_err().to_string(),
            "the host \"a*b.example\" is not a DNS name: only letters, digits, '-' and '_' may appear in a label"
        );
    }
}
