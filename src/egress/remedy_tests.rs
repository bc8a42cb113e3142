//! The remedy on the refusals a first hour meets: each names every setting a
//! URL needs at once, and the variables it prints, set as a shell would set
//! them, load and let the URL through.

use std::net::IpAddr;

use super::*;
use crate::config::Config;

fn defaults() -> EgressConfig {
    Config::defaults().egress
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an address")
}

/// The configuration `remedy`'s variables give, read as `hookd` reads its
/// environment after a shell took the quotes off.
fn applied(remedy: &Remedy, before: &[(&str, &str)]) -> EgressConfig {
    let mut env: Vec<(String, String)> = before
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for setting in &remedy.settings {
        let assignment = setting.assignment();
        let (name, value) = assignment.split_once('=').expect("NAME=value");
        let value = value.trim_matches('\'');
        env.retain(|(k, _)| k != name);
        env.push((name.to_string(), value.to_string()));
    }
    Config::load(None, env)
        .unwrap_or_else(|e| panic!("the remedy's variables load: {e}"))
        .egress
}

fn allows(egress: &EgressConfig, url: &str, resolved: &[IpAddr]) -> bool {
    let rules = EgressRules::from_config(egress);
    check_url(url, &rules).is_ok() && resolved.iter().all(|a| rules.policy.check(*a).is_ok())
}

#[test]
fn a_local_receiver_gets_one_remedy_for_all_three_refusals() {
    let url = "http://127.0.0.1:9000/hooks";
    let remedy = for_url(&defaults(), url, &[]).expect("settings allow a local receiver");
    assert_eq!(
        remedy.settings,
        vec![
            Setting::AllowHttp,
            Setting::AllowedPorts(vec![443, 8443, 9000]),
            Setting::AllowCidrs(vec!["127.0.0.1/32".parse().unwrap()]),
        ]
    );
    assert_eq!(
        remedy.to_string(),
        "allow it with `egress.allow_http = true`, `egress.allowed_ports = [443, 8443, 9000]` \
         and `egress.allow_cidrs = [\"127.0.0.1/32\"]` (`HOOKD_EGRESS__ALLOW_HTTP=true \
         HOOKD_EGRESS__ALLOWED_PORTS='[443, 8443, 9000]' \
         HOOKD_EGRESS__ALLOW_CIDRS='[\"127.0.0.1/32\"]'`), for `hookd serve` and the hookd \
         commands alike"
    );
    assert!(
        allows(&applied(&remedy, &[]), url, &[]),
        "the printed variables, once set, let {url} through"
    );
}

#[test]
fn each_refusal_alone_names_only_its_own_setting() {
    let http = for_url(&defaults(), "http://hooks.example.com:8443/in", &[]).unwrap();
    assert_eq!(http.settings, vec![Setting::AllowHttp]);
    assert_eq!(
        http.to_string(),
        "allow it with `egress.allow_http = true` (`HOOKD_EGRESS__ALLOW_HTTP=true`), for \
         `hookd serve` and the hookd commands alike"
    );
    // http on its own port, 80, needs the port too: the egress page's example once forgot it.
    let port_80 = for_url(&defaults(), "http://hooks.example.com/in", &[]).unwrap();
    assert_eq!(
        port_80.settings,
        vec![
            Setting::AllowHttp,
            Setting::AllowedPorts(vec![80, 443, 8443])
        ]
    );
    let port = for_url(&defaults(), "https://hooks.example.com:9443/in", &[]).unwrap();
    assert_eq!(
        port.settings,
        vec![Setting::AllowedPorts(vec![443, 8443, 9443])]
    );
    let address = for_url(&defaults(), "https://[fd12::7]/in", &[]).unwrap();
    assert_eq!(
        address.settings,
        vec![Setting::AllowCidrs(vec!["fd12::7/128".parse().unwrap()])]
    );
}

#[test]
fn a_list_is_written_out_whole_with_what_was_already_allowed() {
    let env = [
        ("HOOKD_EGRESS__ALLOW_CIDRS", r#"["10.20.0.0/16"]"#),
        ("HOOKD_EGRESS__ALLOWED_PORTS", "[443]"),
    ];
    let egress = Config::load(
        None,
        env.iter().map(|(k, v)| (k.to_string(), v.to_string())),
    )
    .unwrap()
    .egress;
    let url = "https://10.30.0.5:8080/in";
    let remedy = for_url(&egress, url, &[]).unwrap();
    assert_eq!(
        remedy.settings,
        vec![
            Setting::AllowedPorts(vec![443, 8080]),
            Setting::AllowCidrs(vec![
                "10.20.0.0/16".parse().unwrap(),
                "10.30.0.5/32".parse().unwrap()
            ]),
        ]
    );
    assert!(allows(&applied(&remedy, &env), url, &[]));
}

#[test]
fn a_name_that_resolves_to_private_addresses_gets_each_of_them() {
    let resolved = [ip("10.0.0.7"), ip("10.0.0.8")];
    let url = "https://billing.internal/hooks";
    let remedy = for_url(&defaults(), url, &resolved).unwrap();
    assert_eq!(
        remedy.settings,
        vec![Setting::AllowCidrs(vec![
            "10.0.0.7/32".parse().unwrap(),
            "10.0.0.8/32".parse().unwrap()
        ])]
    );
    assert!(allows(&applied(&remedy, &[]), url, &resolved));
}

#[test]
fn a_registration_refused_for_a_name_is_remedied_for_every_address_it_gave() {
    let policy = EgressRules::from_config(&defaults()).policy;
    let refused = RegistrationError::Resolve(ResolveError::Blocked {
        host: "billing.internal".into(),
        reason: policy.check(ip("192.168.1.2")).unwrap_err(),
        others: vec![policy.check(ip("::1")).unwrap_err()],
    });
    let remedy =
        for_registration(&defaults(), "https://billing.internal/", &refused).expect("a remedy");
    assert_eq!(
        remedy.settings,
        vec![Setting::AllowCidrs(vec![
            "192.168.1.2/32".parse().unwrap(),
            "::1/128".parse().unwrap()
        ])]
    );
}

#[test]
fn a_denied_address_is_remedied_by_dropping_only_the_entry_that_denies_it() {
    let mut egress = defaults();
    egress.allow_cidrs = vec!["10.0.0.0/8".parse().unwrap()];
    egress.deny_cidrs = vec![
        "10.9.0.0/16".parse().unwrap(),
        "192.0.2.0/24".parse().unwrap(),
    ];
    let remedy = for_url(&egress, "https://10.9.1.1/", &[]).unwrap();
    assert_eq!(
        remedy.settings,
        vec![Setting::DenyCidrs(vec!["192.0.2.0/24".parse().unwrap()])]
    );
}

#[test]
fn nothing_is_suggested_where_no_setting_should_or_can_help() {
    let egress = defaults();
    for (url, why) in [
        ("http://169.254.169.254/latest/meta-data", "cloud metadata"),
        (
            "https://[::ffff:169.254.169.254]/",
            "cloud metadata, IPv4-mapped",
        ),
        ("ftp://hooks.example.com/", "a scheme other than http"),
        ("https://user:pw@hooks.example.com/", "user-info"),
        ("not a url", "not a URL"),
        ("https://hooks.example.com/in", "nothing is refused"),
    ] {
        assert_eq!(for_url(&egress, url, &[]), None, "{url}: {why}");
    }
    assert_eq!(
        for_url(&egress, "https://meta.example/", &[ip("169.254.169.254")]),
        None,
        "a name resolving to a metadata address"
    );
}

#[test]
fn one_remedy_for_many_urls_allows_all_it_can_and_counts_the_rest() {
    let refused: Vec<(&str, &[IpAddr])> = vec![
        ("http://10.1.0.1/a", &[]),
        ("https://10.1.0.2:9000/b", &[]),
        ("http://169.254.169.254/", &[]),
    ];
    let (remedy, beyond) = for_all(&defaults(), refused.iter().copied());
    let remedy = remedy.expect("the first two can be allowed");
    assert_eq!(beyond, 1, "the metadata address cannot");
    let widened = applied(&remedy, &[]);
    for (url, resolved) in &refused[..2] {
        assert!(allows(&widened, url, resolved), "{url}");
    }
    assert!(!allows(&widened, refused[2].0, &[]));
}
