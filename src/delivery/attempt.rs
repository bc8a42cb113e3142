//! One attempt: resolve the endpoint's host, pin a checked address, sign and
//! send; and the pure decision of where the delivery goes next.

use std::{net::IpAddr, rc::Rc, time::Duration};

use actix::Addr;
use rand::rngs::StdRng;

use super::{
    Shared,
    client::{self, Observed, PinnedClient},
};
use crate::{
    domain::{
        outcome::{ErrorCategory, Outcome},
        retry::{Next, RetryPolicy},
    },
    egress::{
        resolver::{Resolve, ResolveError, ResolverActor},
        url_check::CallbackUrl,
    },
    secret::Secret,
    signing::signature_header,
    store::{
        deliveries::{Claimed, NextState},
        endpoints::Endpoint,
    },
};

/// A claimed delivery with the bytes it sends.
pub(super) struct Job {
    pub(super) claimed: Claimed,
    pub(super) body: bytes::Bytes,
    pub(super) event_id: String,
}

pub(super) struct Loaded {
    pub(super) endpoint: Endpoint,
    pub(super) url: Result<CallbackUrl, String>,
    pub(super) secrets: Vec<Secret>,
    pub(super) at_ms: i64,
}

/// Where a delivery goes after an attempt. A manual replay that fails leaves
/// the delivery's state and schedule as they were.
pub(super) fn next_state(
    outcome: &Outcome,
    manual: bool,
    policy: &RetryPolicy,
    attempt_no: u32,
    created_at: i64,
    now: i64,
    rng: &mut StdRng,
) -> NextState {
    let retry_after = match outcome {
        Outcome::Delivered => return NextState::Delivered,
        _ if manual => return NextState::Unchanged,
        Outcome::Failed { retry_after, .. } => *retry_after,
        Outcome::Gone => None,
    };
    match policy.next(attempt_no, created_at, now, retry_after, rng) {
        Next::At(t) => NextState::RetryAt(t),
        Next::Dead => NextState::Dead,
    }
}

/// Resolves, pins and sends one attempt; the client it used comes back for reuse.
pub(super) async fn attempt_once(
    shared: &Shared,
    resolver: &Addr<ResolverActor>,
    cached: Option<Rc<PinnedClient>>,
    loaded: &Loaded,
    job: &Job,
) -> (Observed, Option<Rc<PinnedClient>>) {
    let url = match &loaded.url {
        Ok(u) => u,
        Err(e) => {
            return (
                Observed::failed(ErrorCategory::Blocked, e.clone(), Duration::ZERO, None),
                None,
            );
        }
    };
    let addrs: Vec<IpAddr> = match resolver.send(Resolve(url.host.clone())).await {
        Ok(Ok(a)) => a,
        Ok(Err(ResolveError::Blocked { reason, .. })) => {
            return (
                Observed::failed(
                    ErrorCategory::Blocked,
                    reason.to_string(),
                    Duration::ZERO,
                    None,
                ),
                None,
            );
        }
        Ok(Err(e)) => {
            return (
                Observed::failed(ErrorCategory::Dns, e.to_string(), Duration::ZERO, None),
                None,
            );
        }
        Err(e) => {
            return (
                Observed::failed(ErrorCategory::Internal, e.to_string(), Duration::ZERO, None),
                None,
            );
        }
    };
    // A client only ever talks to the address set it was built for.
    let client = match cached {
        Some(c) if c.addrs == addrs => c,
        _ => Rc::new(PinnedClient::new(
            addrs,
            shared.tls.clone(),
            &shared.limits,
            loaded.endpoint.concurrency as usize,
        )),
    };
    let now = shared.clock.now();
    let timestamp = now.timestamp();
    let headers = [
        ("content-type", "application/json".to_string()),
        (
            "user-agent",
            concat!("hookd/", env!("CARGO_PKG_VERSION")).to_string(),
        ),
        ("webhook-id", job.event_id.clone()),
        ("webhook-timestamp", timestamp.to_string()),
        (
            "webhook-signature",
            signature_header(&loaded.secrets, &job.event_id, timestamp, &job.body),
        ),
    ];
    let request = client::Request {
        url: &url.url,
        port: url.port,
        headers: &headers,
        body: job.body.clone(),
    };
    let observed = client::send(&client, request, &shared.limits, now).await;
    (observed, Some(client))
}
