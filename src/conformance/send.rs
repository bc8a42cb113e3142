//! The check's effects: each case's request resolved by the egress resolver,
//! pinned to the checked addresses and sent through the delivery client, one
//! after another, each under the suite's deadline.

use std::{net::IpAddr, sync::Arc};

use actix::Addr;

use super::{
    Scorecard, case_result,
    judge::{Got, judge},
    suite::{Case, DEADLINE, Script},
};
use crate::{
    delivery::{
        client::{self, Limits, Observed, PinnedClient},
        proxy::Route,
    },
    domain::{
        clock::Clock,
        outcome::{ErrorCategory, Outcome},
    },
    egress::{
        resolver::{Resolve, ResolveError, ResolverActor},
        url_check::CallbackUrl,
    },
};

/// What the check sends through: the same resolver, TLS trust, client
/// limits and route (direct or the egress proxy) as deliveries, with the
/// suite's deadline per request.
pub struct Wire<'a> {
    pub resolver: &'a Addr<ResolverActor>,
    pub tls: Arc<rustls::ClientConfig>,
    pub limits: Limits,
    pub route: Route,
    pub clock: &'a dyn Clock,
}

impl<'a> Wire<'a> {
    pub fn new(
        resolver: &'a Addr<ResolverActor>,
        tls: Arc<rustls::ClientConfig>,
        delivery: &Limits,
        route: Route,
        clock: &'a dyn Clock,
    ) -> Wire<'a> {
        Wire {
            resolver,
            tls,
            route,
            limits: Limits {
                request_timeout: DEADLINE,
                ..delivery.clone()
            },
            clock,
        }
    }
}

/// Runs the whole suite against `url`, in order; the scorecard is dated
/// when the check started.
pub async fn run(script: &Script, url: &CallbackUrl, wire: &Wire<'_>) -> Scorecard {
    use tracing::Instrument as _;
    let started = wire.clock.now_ms();
    let span = tracing::info_span!("conformance_check", url = %url.url);
    async {
        let mut client = None;
        let mut cases = Vec::with_capacity(Case::ALL.len());
        for case in Case::ALL {
            let got = send_case(script, case, url, wire, &mut client).await;
            let verdict = judge(case, &got);
            tracing::debug!(case = case.name(), passed = verdict.passed, got = %verdict.got, "conformance case");
            cases.push(case_result(case, verdict));
        }
        let card = Scorecard::of(cases, started);
        tracing::info!(passed = card.passed, "conformance check finished");
        card
    }
    .instrument(span)
    .await
}

/// Resolves (every time, as an attempt does), pins and sends one case.
async fn send_case(
    script: &Script,
    case: Case,
    url: &CallbackUrl,
    wire: &Wire<'_>,
    slot: &mut Option<PinnedClient>,
) -> Got {
    let addrs: Vec<IpAddr> = match wire.resolver.send(Resolve(url.host.clone())).await {
        Ok(Ok(resolved)) => resolved.addrs,
        Ok(Err(e @ ResolveError::Blocked { .. })) => return failed(ErrorCategory::Blocked, e),
        Ok(Err(e)) => return failed(ErrorCategory::Dns, e),
        Err(e) => return failed(ErrorCategory::Internal, e),
    };
    // One client per checked address set, as an endpoint keeps one.
    let client = match slot.take() {
        Some(c) if c.addrs == addrs => slot.insert(c),
        _ => slot.insert(PinnedClient::new(
            addrs,
            wire.tls.clone(),
            &wire.limits,
            &wire.route,
            1,
        )),
    };
    let now = wire.clock.now();
    let outgoing = script.request(case, now);
    let request = client::Request {
        url: &url.url,
        port: url.port,
        headers: &outgoing.headers,
        extra_headers: &[],
        body: outgoing.body,
    };
    got(client::send(client, request, &wire.limits, now).await)
}

fn failed(category: ErrorCategory, e: impl std::fmt::Display) -> Got {
    Got::Failed {
        category,
        detail: e.to_string(),
    }
}

/// What the client observed, as the judge reads it: a status is an answer
/// unless the response did not finish in time.
fn got(o: Observed) -> Got {
    match (o.status, o.outcome) {
        (
            _,
            Outcome::Failed {
                category: ErrorCategory::Timeout,
                ..
            },
        ) => Got::Failed {
            category: ErrorCategory::Timeout,
            detail: format!("no answer within {} s", DEADLINE.as_secs()),
        },
        (Some(status), _) => Got::Answered {
            status,
            latency: o.latency,
        },
        (None, Outcome::Failed { category, .. }) => Got::Failed {
            category,
            detail: o.detail.unwrap_or_default(),
        },
        (None, _) => Got::Failed {
            category: ErrorCategory::Internal,
            detail: o.detail.unwrap_or_default(),
        },
    }
}
