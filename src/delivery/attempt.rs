//! One attempt: resolve the endpoint's host, pin a checked address, sign and
//! send; and the pure decision of where the delivery goes next.

use std::{
    net::IpAddr,
    rc::Rc,
    sync::Arc,
    time::{Duration, Instant},
};

use actix::Addr;
use rand::rngs::StdRng;

use super::{
    Shared,
    client::{self, Observed, PinnedClient},
    oauth2::{self, TokenSlot},
    present::Presented,
};
use crate::{
    domain::{
        outcome::{ErrorCategory, Outcome},
        redact_url::redact_url,
        retry::{Next, RetryPolicy},
        trace::TraceContext,
    },
    egress::{
        host::Host,
        resolver::{Resolve, ResolveError, Resolved, ResolverActor},
        url_check::CallbackUrl,
    },
    signing::{SigningKey, signature_header},
    store::{
        claims::Claimed,
        deliveries::{AttemptRecord, NextState, Trigger},
        endpoints::Endpoint,
    },
};

/// How much of a response body an attempt keeps (redacted).
const EXCERPT_BYTES: usize = 1024;

/// The record of one finished attempt of `claimed`, sent to `url` (the
/// endpoint's URL as the actor held it), on its way to `next`.
pub(super) fn attempt_record(
    (endpoint_id, url): (&str, Option<&str>),
    claimed: &Claimed,
    observed: &Observed,
    started_at: i64,
    next: NextState,
) -> AttemptRecord {
    let error = match &observed.outcome {
        Outcome::Delivered => None,
        Outcome::Gone => Some((
            ErrorCategory::HttpStatus,
            "the receiver answered 410 Gone".to_string(),
        )),
        Outcome::Failed { category, .. } => {
            Some((*category, observed.detail.clone().unwrap_or_default()))
        }
    };
    AttemptRecord {
        id: crate::domain::ids::new_id("att"),
        delivery_id: claimed.id.clone(),
        endpoint_id: endpoint_id.to_string(),
        attempt_no: claimed.attempt_count + 1,
        trigger: if claimed.replay_id.is_some() {
            Trigger::Manual
        } else {
            Trigger::Scheduled
        },
        started_at,
        latency_ms: u32::try_from(observed.latency.as_millis()).unwrap_or(u32::MAX),
        status_code: observed.status,
        error,
        excerpt: (!observed.body.is_empty())
            .then(|| super::excerpt::redacted_excerpt(&observed.body, EXCERPT_BYTES)),
        remote_addr: observed.remote.map(|a| a.to_string()),
        url: url.map(redact_url),
        location: observed.location.clone(),
        next,
        replay_id: claimed.replay_id.clone(),
        claim_seq: claimed.claim_seq,
        ordered: claimed.ordered,
    }
}

/// A claimed delivery with the bytes it sends.
pub struct Job {
    pub(super) claimed: Claimed,
    pub(super) body: bytes::Bytes,
    pub(super) event_id: String,
    /// The event's type and partner, checked against the endpoint again
    /// before the attempt (`domain::subscription::qualifies`).
    pub(super) event_type: String,
    pub(super) partner_id: String,
    /// The event's stored trace context: its attempts' spans are children
    /// of it (a retry days later joins the same trace).
    pub(super) trace: Option<crate::domain::trace::TraceContext>,
}

impl Job {
    pub(super) fn new(
        claimed: Claimed,
        event: &crate::domain::event::NewEvent,
        body: bytes::Bytes,
    ) -> Job {
        Job {
            body,
            event_id: event.id.as_str().to_string(),
            event_type: event.event_type.clone(),
            partner_id: event.partner_id.clone(),
            trace: event.trace.clone(),
            claimed,
        }
    }
}

pub(super) struct Loaded {
    pub(super) endpoint: Endpoint,
    pub(super) url: Result<CallbackUrl, String>,
    pub(super) secrets: Vec<SigningKey>,
    /// Headers, token and client certificate it presents to the receiver.
    pub(super) presented: Presented,
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

/// The endpoint's client and OAuth2 tokens, shared by its in-flight
/// attempts and kept across settings reloads.
#[derive(Default)]
pub(super) struct Wire {
    client: std::cell::RefCell<Option<Rc<PinnedClient>>>,
    /// The host's checked addresses while the answer is good: attempts in
    /// between do not ask the resolver actor (on another thread) again.
    resolved: std::cell::RefCell<Option<(Host, Resolved)>>,
    tokens: TokenSlot,
}

pub(super) type ClientSlot = Rc<Wire>;

impl Wire {
    /// Drops the client and with it its idle connections.
    pub(super) fn drop_client(&self) {
        *self.client.borrow_mut() = None;
    }

    /// `host`'s checked addresses, if an answer for it is still good at `now`.
    fn resolved(&self, host: &Host, now: Instant) -> Option<Vec<IpAddr>> {
        match &*self.resolved.borrow() {
            Some((known, answer)) if known == host && now < answer.valid_until => {
                Some(answer.addrs.clone())
            }
            _ => None,
        }
    }

    fn keep_resolved(&self, host: &Host, answer: Resolved) {
        *self.resolved.borrow_mut() = Some((host.clone(), answer));
    }
}

/// Resolves, pins and sends one attempt; `None` if it was withheld because
/// the endpoint's lease was no longer confirmed when it was about to go out
/// (the process paused, or lost the lease, while it resolved): the caller
/// hands the delivery back unattempted. `trace`: the attempt span's context,
/// sent as `traceparent` (and `tracestate`) outside the signed content.
pub(super) async fn attempt_once(
    shared: &Arc<Shared>,
    resolver: &Addr<ResolverActor>,
    slot: &ClientSlot,
    loaded: &Loaded,
    job: &Job,
    trace: Option<&TraceContext>,
) -> Option<Observed> {
    // Failures before anything is sent: no latency, no answer.
    let unsent =
        |category, reason: String| Some(Observed::failed(category, reason, Duration::ZERO, None));
    let attempted = super::oncall::Attempted {
        endpoint_id: &loaded.endpoint.id,
        partner_id: &loaded.endpoint.partner_id,
        url: &loaded.endpoint.url,
        delivery_id: &job.claimed.id,
    };
    let url = match &loaded.url {
        Ok(u) => u,
        Err(e) => {
            super::oncall::blocked(shared, &attempted, e, &[]);
            return unsent(ErrorCategory::Blocked, e.clone());
        }
    };
    let known = slot.resolved(&url.host, Instant::now());
    let addrs: Vec<IpAddr> = match known {
        Some(addrs) => addrs,
        None => match resolver.send(Resolve(url.host.clone())).await {
            Ok(Ok(resolved)) => {
                let addrs = resolved.addrs.clone();
                slot.keep_resolved(&url.host, resolved);
                addrs
            }
            Ok(Err(ResolveError::Blocked { reason, others, .. })) => {
                let refused: Vec<IpAddr> = std::iter::once(&reason)
                    .chain(&others)
                    .map(|f| f.ip)
                    .collect();
                super::oncall::blocked(shared, &attempted, &reason.to_string(), &refused);
                return unsent(ErrorCategory::Blocked, reason.to_string());
            }
            Ok(Err(e)) => return unsent(ErrorCategory::Dns, e.to_string()),
            Err(e) => return unsent(ErrorCategory::Internal, e.to_string()),
        },
    };
    // The last look before the wire: a decision made under the lease may
    // have waited out a pause (SIGSTOP, a stalled VM) in the resolver. (The
    // connections look again at each write: `fenced_io`.)
    let owned = || shared.leases.confirmed(&loaded.endpoint.id);
    if !owned() {
        return None;
    }
    let tls = match &loaded.presented.tls {
        None => &shared.tls,
        Some(Ok(client_tls)) => &client_tls.config,
        Some(Err(e)) => return unsent(ErrorCategory::Tls, e.clone()),
    };
    let bearer = match &loaded.presented.oauth2 {
        None => None,
        Some(c) => match oauth2::bearer(shared, resolver, &slot.tokens, c, None).await {
            Ok(token) => Some(token),
            Err(e) => return unsent(ErrorCategory::Auth, e),
        },
    };
    // A client only ever talks to the address set it was built for, with
    // the TLS it was built with; it is shared at once, so concurrent
    // attempts do not each build their own.
    let client = {
        let mut current = slot.client.borrow_mut();
        match &*current {
            Some(c) if c.addrs == addrs && Arc::ptr_eq(&c.tls, tls) => c.clone(),
            _ => {
                let c = Rc::new(PinnedClient::fenced(
                    addrs,
                    tls.clone(),
                    &shared.limits,
                    &shared.route,
                    loaded.endpoint.concurrency as usize,
                    lease_fence(shared, &loaded.endpoint.id),
                ));
                *current = Some(c.clone());
                c
            }
        }
    };
    let observed = send_signed(
        shared,
        &client,
        url,
        loaded,
        job,
        (bearer.as_deref(), trace),
    )
    .await;
    // No answer, and the lease gone meanwhile: the fence may have withheld
    // it (and a record under a lost lease would change nothing anyway).
    if observed.status.is_none() && !owned() {
        return None;
    }
    // A refused token is replaced once, and the request sent again with it.
    let Some(c) = loaded
        .presented
        .oauth2
        .as_ref()
        .filter(|_| observed.status == Some(401))
    else {
        return Some(observed);
    };
    match oauth2::bearer(shared, resolver, &slot.tokens, c, bearer.as_deref()).await {
        Ok(token) => {
            Some(send_signed(shared, &client, url, loaded, job, (Some(&token), trace)).await)
        }
        Err(e) => unsent(ErrorCategory::Auth, e),
    }
}

/// Whether `endpoint`'s lease is confirmed here, asked by its connections
/// at each write.
fn lease_fence(shared: &Arc<Shared>, endpoint: &str) -> super::fenced_io::Fence {
    let (leases, endpoint) = (shared.leases.clone(), endpoint.to_string());
    super::fenced_io::Fence::new(move || leases.confirmed(&endpoint))
}

/// Signs the job now and sends it with the endpoint's headers (and token).
async fn send_signed(
    shared: &Shared,
    client: &PinnedClient,
    url: &CallbackUrl,
    loaded: &Loaded,
    job: &Job,
    (bearer, trace): (Option<&str>, Option<&TraceContext>),
) -> Observed {
    let now = shared.clock.now();
    let timestamp = now.timestamp();
    let mut headers = vec![
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
    if let Some(token) = bearer {
        headers.push(("authorization", format!("Bearer {token}")));
    }
    // A manual replay is outside the schedule, and outside any order.
    if job.claimed.replay_id.is_some() {
        headers.push(("hookd-replay", "out-of-band".to_string()));
    }
    // Signed: id, timestamp and body (Standard Webhooks); the trace context
    // rides beside them, unsigned, and only when telemetry is on.
    if let Some(t) = trace {
        headers.push(("traceparent", t.traceparent().to_string()));
        if let Some(state) = t.tracestate() {
            headers.push(("tracestate", state.to_string()));
        }
    }
    let request = client::Request {
        url: &url.url,
        port: url.port,
        headers: &headers,
        extra_headers: &loaded.presented.headers,
        body: job.body.clone(),
    };
    client::send(client, request, &shared.limits, now).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(addrs: &[&str], valid_until: Instant) -> Resolved {
        Resolved {
            addrs: addrs
                .iter()
                .map(|a| a.parse().expect("an address"))
                .collect(),
            valid_until,
        }
    }

    #[test]
    fn an_answer_is_reused_for_its_host_until_it_runs_out() {
        let wire = Wire::default();
        let host = Host::Name("hooks.example.com".into());
        let now = Instant::now();
        assert_eq!(wire.resolved(&host, now), None, "nothing asked yet");
        wire.keep_resolved(
            &host,
            answer(&["203.0.113.7"], now + Duration::from_secs(30)),
        );
        assert_eq!(
            wire.resolved(&host, now + Duration::from_secs(29)),
            Some(vec!["203.0.113.7".parse().expect("an address")])
        );
        assert_eq!(
            wire.resolved(&host, now + Duration::from_secs(30)),
            None,
            "an answer past its time to live is asked again"
        );
    }

    #[test]
    fn an_answer_for_another_host_is_not_used() {
        let wire = Wire::default();
        let now = Instant::now();
        wire.keep_resolved(
            &Host::Name("old.example.com".into()),
            answer(&["203.0.113.7"], now + Duration::from_secs(30)),
        );
        assert_eq!(
            wire.resolved(&Host::Name("new.example.com".into()), now),
            None,
            "an endpoint whose URL changed asks for its new host"
        );
    }

    #[test]
    fn an_answer_with_no_time_to_live_is_never_reused() {
        let wire = Wire::default();
        let host = Host::Name("rebinding.example.com".into());
        let now = Instant::now();
        wire.keep_resolved(&host, answer(&["203.0.113.7"], now));
        assert_eq!(wire.resolved(&host, now), None);
    }
}
