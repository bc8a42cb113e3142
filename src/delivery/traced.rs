//! An attempt inside its HTTP client span, when telemetry is on: the span is
//! a child of the event's stored context, and its own context goes to the
//! receiver as `traceparent`. When telemetry is off the attempt runs as it
//! is, with no span and no header.

use std::sync::Arc;

use actix::Addr;

use super::{
    Shared,
    attempt::{ClientSlot, Job, Loaded, attempt_once},
    client::Observed,
};
use crate::{domain::outcome::Outcome, egress::resolver::ResolverActor, telemetry::spans};

/// [`attempt_once`], traced.
pub(super) async fn attempt(
    shared: &Arc<Shared>,
    resolver: &Addr<ResolverActor>,
    slot: &ClientSlot,
    loaded: &Loaded,
    job: &Job,
) -> Option<Observed> {
    let Some(tracer) = shared.telemetry.tracer() else {
        return attempt_once(shared, resolver, slot, loaded, job, None).await;
    };
    let url = loaded.url.as_ref().ok();
    let span = spans::attempt(
        tracer,
        &spans::Attempt {
            event_id: &job.event_id,
            delivery_id: &job.claimed.id,
            endpoint_id: &loaded.endpoint.id,
            partner_id: &loaded.endpoint.partner_id,
            attempt_no: job.claimed.attempt_count + 1,
            url: url.map(|u| (&u.url, u.url.host_str().unwrap_or_default(), u.port)),
            trace: job.trace.as_ref(),
        },
    );
    let context = spans::context_of(&span);
    let observed = attempt_once(shared, resolver, slot, loaded, job, context.as_ref()).await;
    let ended = observed.as_ref().map(|o| spans::Ended {
        status: o.status,
        error: match &o.outcome {
            Outcome::Delivered => None,
            Outcome::Gone => Some(crate::domain::outcome::ErrorCategory::HttpStatus.as_str()),
            Outcome::Failed { category, .. } => Some(category.as_str()),
        },
        detail: o.detail.as_deref(),
        peer: o.remote,
    });
    spans::end_attempt(span, ended);
    observed
}
