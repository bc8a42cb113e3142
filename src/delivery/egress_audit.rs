//! Once at start: every endpoint that can still deliver (active or paused)
//! whose URL the egress settings refuse is named at `warn`, with the refusal
//! and the settings that would allow it, then one line counts them and gives
//! the settings that would allow them all. A restart that lost an egress
//! variable shows at once, instead of as a stream of `blocked` attempts.
//!
//! The URLs are judged as registration judges them: the URL rules, then each
//! name resolved (once per name, a few at a time) and every address checked.
//! A name that does not resolve is not the policy's refusal: left to the
//! attempts, which say `dns`. It runs beside the server and the engine, and
//! stops early if hookd is stopping.

use std::{collections::BTreeMap, net::IpAddr, sync::Arc};

use actix::Addr;
use futures_util::StreamExt as _;

use super::{Shared, oncall::host_of};
use crate::{
    egress::{
        host::Host,
        remedy,
        resolver::{Resolve, ResolveError, ResolverActor},
        url_check::{EgressRules, check_url},
    },
    store::{
        StoreError,
        endpoint_urls::{self, EndpointUrl},
    },
};

/// Endpoints read per query.
const PAGE: u64 = 500;
/// Endpoints named one by one, at most; the summary counts them all.
const NAMED: usize = 50;
/// Names resolved at once.
const LOOKUPS: usize = 4;

/// An endpoint whose URL the egress settings refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub endpoint: EndpointUrl,
    /// The refusal, as registration would have said it.
    pub reason: String,
    /// The forbidden addresses its name resolved to, if it was refused for them.
    pub resolved: Vec<IpAddr>,
}

/// What the audit found.
#[derive(Debug, Default)]
pub struct Audit {
    pub checked: usize,
    pub refused: Vec<Refused>,
}

/// Runs the audit beside the server: the one call a start makes.
pub fn start(shared: Arc<Shared>, resolver: Addr<ResolverActor>) {
    actix_rt::spawn(async move {
        match run(&shared, &resolver).await {
            Ok(audit) => say(&shared, &audit),
            Err(e) => {
                tracing::warn!(error = %e, "the start-up egress audit could not read the endpoints")
            }
        }
    });
}

/// Reads every endpoint that can deliver and judges its URL.
pub async fn run(shared: &Shared, resolver: &Addr<ResolverActor>) -> Result<Audit, StoreError> {
    let mut audit = Audit::default();
    let mut names: BTreeMap<String, Vec<EndpointUrl>> = BTreeMap::new();
    let mut after: Option<String> = None;
    loop {
        if shared.is_draining() {
            return Ok(audit);
        }
        let page = endpoint_urls::deliverable(&shared.db, after.as_deref(), PAGE).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.id.clone());
        audit.checked += page.len();
        for endpoint in page {
            match judge_url(endpoint, &shared.rules) {
                Judged::Refused(r) => audit.refused.push(r),
                Judged::Resolve(name, endpoint) => names.entry(name).or_default().push(endpoint),
                Judged::Passed => {}
            }
        }
    }
    let lookups = futures_util::stream::iter(names)
        .map(|(name, endpoints)| async move {
            let answer = resolver.send(Resolve(Host::Name(name))).await;
            (answer, endpoints)
        })
        .buffer_unordered(LOOKUPS);
    let mut lookups = std::pin::pin!(lookups);
    while let Some((answer, endpoints)) = lookups.next().await {
        if shared.is_draining() {
            return Ok(audit);
        }
        if let Ok(Err(blocked @ ResolveError::Blocked { .. })) = answer {
            audit.refused.extend(refused_for_name(&blocked, endpoints));
        }
    }
    audit
        .refused
        .sort_by(|a, b| a.endpoint.id.cmp(&b.endpoint.id));
    Ok(audit)
}

/// What the URL rules alone say of one endpoint.
enum Judged {
    Refused(Refused),
    /// Passed the rules; its name is still to be resolved.
    Resolve(String, EndpointUrl),
    Passed,
}

fn judge_url(endpoint: EndpointUrl, rules: &EgressRules) -> Judged {
    match check_url(&endpoint.url, rules) {
        Err(e) => Judged::Refused(Refused {
            reason: format!("the URL {e}"),
            resolved: Vec::new(),
            endpoint,
        }),
        Ok(url) => match url.host {
            Host::Name(name) => Judged::Resolve(name, endpoint),
            Host::Ip(_) => Judged::Passed,
        },
    }
}

/// The endpoints of a name that resolved to a forbidden address.
fn refused_for_name(blocked: &ResolveError, endpoints: Vec<EndpointUrl>) -> Vec<Refused> {
    let resolved = remedy::blocked_addresses(blocked);
    endpoints
        .into_iter()
        .map(|endpoint| Refused {
            reason: format!("the URL's host {blocked}"),
            resolved: resolved.clone(),
            endpoint,
        })
        .collect()
}

/// The audit's lines: each refused endpoint (up to `NAMED`), then the count.
pub fn say(shared: &Shared, audit: &Audit) {
    let egress = &shared.config.egress;
    for r in audit.refused.iter().take(NAMED) {
        let e = &r.endpoint;
        let remedy = remedy::for_url(egress, &e.url, &r.resolved).map_or_else(
            || "no egress setting allows it".to_string(),
            |r| r.to_string(),
        );
        tracing::warn!(endpoint = %e.id, partner = %e.partner_id, status = %e.status,
            kind = %e.kind, host = %host_of(&e.url), reason = %r.reason, %remedy,
            "the egress settings refuse this endpoint's URL: its deliveries fail as `blocked` until they allow it");
    }
    if audit.refused.is_empty() {
        tracing::debug!(
            endpoints = audit.checked,
            "the egress settings allow every endpoint's URL"
        );
        return;
    }
    let (all, beyond) = remedy::for_all(
        egress,
        audit
            .refused
            .iter()
            .map(|r| (r.endpoint.url.as_str(), r.resolved.as_slice())),
    );
    let remedy = all.map_or_else(
        || "no egress setting allows them".to_string(),
        |r| r.to_string(),
    );
    tracing::warn!(
        refused = audit.refused.len(),
        endpoints = audit.checked,
        named = audit.refused.len().min(NAMED),
        beyond_any_setting = beyond,
        %remedy,
        "endpoints whose URLs the egress settings refuse; the remedy allows all of them that settings can"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn endpoint(id: &str, url: &str) -> EndpointUrl {
        EndpointUrl {
            id: id.into(),
            partner_id: "ptn_1".into(),
            url: url.into(),
            status: "active".into(),
            kind: "endpoint".into(),
        }
    }

    fn rules() -> EgressRules {
        EgressRules::from_config(&Config::defaults().egress)
    }

    #[test]
    fn a_url_the_rules_refuse_is_refused_with_the_reason_registration_gives() {
        let Judged::Refused(r) = judge_url(endpoint("ep_1", "http://127.0.0.1:9000/"), &rules())
        else {
            panic!("plain http to loopback is refused by default");
        };
        assert_eq!(
            r.reason,
            "the URL must use https (plain http is not allowed here), got `http`"
        );
        assert!(r.resolved.is_empty());
    }

    #[test]
    fn a_public_literal_passes_and_a_name_waits_for_its_addresses() {
        assert!(matches!(
            judge_url(endpoint("ep_1", "https://8.8.8.8/in"), &rules()),
            Judged::Passed
        ));
        assert!(matches!(
            judge_url(endpoint("ep_2", "https://Hooks.Example.com/in"), &rules()),
            Judged::Resolve(name, _) if name == "hooks.example.com"
        ));
    }

    #[test]
    fn every_endpoint_of_a_blocked_name_is_refused_with_all_its_forbidden_addresses() {
        let policy = rules().policy;
        let blocked = ResolveError::Blocked {
            host: "billing.internal".into(),
            reason: policy.check("10.0.0.7".parse().unwrap()).unwrap_err(),
            others: vec![policy.check("10.0.0.8".parse().unwrap()).unwrap_err()],
        };
        let refused = refused_for_name(
            &blocked,
            vec![
                endpoint("ep_1", "https://billing.internal/a"),
                endpoint("ep_2", "https://billing.internal/b"),
            ],
        );
        assert_eq!(refused.len(), 2);
        for r in &refused {
            assert_eq!(r.resolved.len(), 2, "{r:?}");
            assert!(
                r.reason.starts_with(
                    "the URL's host billing.internal resolves to a forbidden address: 10.0.0.7"
                ),
                "{}",
                r.reason
            );
        }
    }
}
