//! What a partner can do to its endpoints, whether it asked through the
//! API (JSON) or the portal (forms): each operation checks its input, acts
//! through the partner's scoped store, and tells the fanout. Handlers only
//! read requests and shape answers.

use super::{
    endpoint_acts as acts,
    endpoint_shapes::{CreateEndpoint, InitialStatus, Recover, RotateSecret, UpdateEndpoint},
    filters::{check_filter, filter_after},
    pins,
};
use crate::{
    delivery::messages::EndpointChanged,
    domain::{event::valid_event_type, filter::Filter},
    egress::url_check::{RegistrationError, check_registration},
    http::{AppState, problem::Problem},
    signing::SigningKey,
    store::{
        endpoint_status::StatusEffects,
        endpoints::{Endpoint, EndpointStatus, NewEndpoint},
        scoped::{EndpointPatch, Scoped, for_partner},
    },
};

pub(crate) use super::endpoint_acts::not_found;

pub(crate) fn check_types(types: &[String]) -> Result<(), Problem> {
    if types.len() > 100 {
        return Err(Problem::out_of_range(
            "event_types",
            "at most 100 event types",
        ));
    }
    for (i, t) in types.iter().enumerate() {
        let probe = t
            .strip_suffix(".*")
            .map(|p| format!("{p}.x"))
            .unwrap_or_else(|| t.clone());
        if !valid_event_type(&probe) {
            return Err(Problem::invalid(
                format!("event_types[{i}]"),
                format!("`{t}` is not an event type like usage.finalized or usage.*"),
            ));
        }
    }
    Ok(())
}

pub(crate) fn check_text(field: &str, value: &str, max: usize) -> Result<(), Problem> {
    if value.chars().count() > max || value.chars().any(|c| c.is_control() && c != '\n') {
        return Err(Problem::out_of_range(
            field,
            format!("{field} must be at most {max} characters without control characters"),
        ));
    }
    Ok(())
}

pub(crate) fn check_range(
    field: &str,
    value: Option<u32>,
    range: std::ops::RangeInclusive<u32>,
) -> Result<(), Problem> {
    match value {
        Some(v) if !range.contains(&v) => Err(Problem::out_of_range(
            field,
            format!(
                "{field} must be between {} and {}",
                range.start(),
                range.end()
            ),
        )),
        _ => Ok(()),
    }
}

pub(crate) async fn checked_url(state: &AppState, url: &str) -> Result<String, Problem> {
    match check_registration(url, &state.shared.rules, &state.engine.resolver).await {
        Ok(u) => Ok(u.url.to_string()),
        Err(RegistrationError::Resolver(e)) => Err(Problem::internal(&e)),
        Err(e) => Err(Problem::invalid_url("url", e.to_string())),
    }
}

/// A notification endpoint is changed and removed with `PATCH /v1/partner`.
pub(crate) fn managed_here(e: &crate::store::endpoints::Endpoint) -> Result<(), Problem> {
    if e.kind == crate::store::endpoints::Kind::Endpoint {
        return Ok(());
    }
    Err(Problem::conflict(
        "this is your notification URL: change or remove it with PATCH /v1/partner (notification_url)",
    ))
}

/// Creates an endpoint of `partner`; its secret is returned this once.
pub(crate) async fn create(
    state: &AppState,
    partner: &str,
    input: CreateEndpoint,
) -> Result<(Endpoint, SigningKey), Problem> {
    let types = input.event_types.unwrap_or_default();
    check_types(&types)?;
    let description = input.description.unwrap_or_default();
    check_text("description", &description, 1000)?;
    if let Some(v) = &input.schema_version {
        check_text("schema_version", v, 32)?;
    }
    check_range("concurrency", input.concurrency, 1..=256)?;
    check_range("rate_limit", input.rate_limit, 1..=10_000)?;
    let filter = match &input.filter {
        Some(given) => Some(check_filter(&state.shared.catalog, &types, given)?),
        None => None,
    };
    let url = checked_url(state, &input.url).await?;
    let new = NewEndpoint {
        partner_id: partner.to_string(),
        url,
        description,
        event_types: types,
        schema_version: input.schema_version,
        schema_versions: match &input.schema_versions {
            Some(given) => pins::parse(given, &state.shared.catalog)?,
            None => Default::default(),
        },
        concurrency: input
            .concurrency
            .unwrap_or(state.shared.config.delivery.default_concurrency),
        rate_limit: input.rate_limit,
        status: match input.status {
            Some(InitialStatus::Paused) => EndpointStatus::Paused,
            _ => EndpointStatus::Active,
        },
        ordering: input.ordering.map(Into::into).unwrap_or_default(),
        on_dead: input.ordering_on_dead.map(Into::into).unwrap_or_default(),
        filter,
    };
    let (endpoint, secret) = crate::store::endpoints::create(
        &state.shared.db,
        &state.shared.secrets,
        new,
        input.signature_scheme.unwrap_or_default().into(),
        state.shared.clock.now_ms(),
    )
    .await?;
    Ok((endpoint, secret))
}

/// The partner's endpoint `id` if the endpoints API may change it (a
/// notification endpoint is changed with `PATCH /v1/partner`).
pub(crate) async fn changeable<'a>(
    state: &'a AppState,
    partner: &'a str,
    id: &str,
) -> Result<Scoped<'a>, Problem> {
    let scoped = for_partner(&state.shared.db, partner);
    managed_here(&scoped.endpoint(id).await?.ok_or_else(not_found)?)?;
    Ok(scoped)
}

/// Changes what `input` names of the partner's endpoint `id`.
pub(crate) async fn update(
    state: &AppState,
    partner: &str,
    id: &str,
    input: UpdateEndpoint,
) -> Result<Endpoint, Problem> {
    let scoped = changeable(state, partner, id).await?;
    if let Some(t) = &input.event_types {
        check_types(t)?;
    }
    let filter = filter_change(state, &scoped, id, &input).await?;
    if let Some(d) = &input.description {
        check_text("description", d, 1000)?;
    }
    if let Some(v) = &input.schema_version {
        check_text("schema_version", v, 32)?;
    }
    check_range("concurrency", input.concurrency, 1..=256)?;
    check_range("rate_limit", input.rate_limit, 1..=10_000)?;
    let url = match &input.url {
        Some(u) => Some(checked_url(state, u).await?),
        None => None,
    };
    let patch = EndpointPatch {
        url,
        description: input.description,
        event_types: input.event_types,
        schema_version: input.schema_version.map(Some),
        schema_versions: match &input.schema_versions {
            Some(given) => Some(pins::parse(given, &state.shared.catalog)?),
            None => None,
        },
        concurrency: input.concurrency,
        rate_limit: input.rate_limit.map(Some),
        ordering: input.ordering.map(Into::into),
        on_dead: input.ordering_on_dead.map(Into::into),
        filter,
    };
    let e = scoped
        .update_endpoint(id, patch, state.shared.clock.now_ms())
        .await?
        .ok_or_else(not_found)?;
    state.engine.fanout.do_send(EndpointChanged(e.id.clone()));
    Ok(e)
}

/// The filter an update leaves the endpoint with ([`filter_after`]).
async fn filter_change(
    state: &AppState,
    scoped: &Scoped<'_>,
    id: &str,
    input: &UpdateEndpoint,
) -> Result<Option<Option<Filter>>, Problem> {
    let current = scoped.endpoint(id).await?.ok_or_else(not_found)?;
    filter_after(
        &state.shared.catalog,
        &current,
        input.event_types.as_deref(),
        input.filter.as_ref().map(Option::as_ref),
    )
}

/// A new secret for the partner's endpoint `id` ([`acts::rotate`]), and
/// the fanout told.
pub(crate) async fn rotate(
    state: &AppState,
    partner: &str,
    id: &str,
    input: &RotateSecret,
) -> Result<(SigningKey, i64), Problem> {
    let shared = &state.shared;
    let now = shared.clock.now_ms();
    let rotated = acts::rotate(
        &shared.db,
        &shared.secrets,
        &shared.config.api,
        (partner, id),
        input,
        now,
    )
    .await?;
    state.engine.fanout.do_send(EndpointChanged(id.to_string()));
    Ok(rotated)
}

/// Ends the rotation overlap now ([`acts::expire_previous`]), and the
/// fanout told.
pub(crate) async fn expire_previous(
    state: &AppState,
    partner: &str,
    id: &str,
) -> Result<u64, Problem> {
    let now = state.shared.clock.now_ms();
    let expired = acts::expire_previous(&state.shared.db, (partner, id), now).await?;
    state.engine.fanout.do_send(EndpointChanged(id.to_string()));
    Ok(expired)
}

/// Sends a `webhook.test` event to the partner's endpoint `id` only
/// ([`acts::send_test`]); returns (event id, delivery id).
pub(crate) async fn send_test(
    state: &AppState,
    partner: &str,
    id: &str,
) -> Result<(String, String), Problem> {
    let now = state.shared.clock.now_ms();
    let sent = acts::send_test(&state.shared.db, (partner, id), now).await?;
    state.engine.fanout.do_send(EndpointChanged(id.to_string()));
    Ok(sent)
}

/// Sets the status of one of `partner`'s endpoints and tells the fanout:
/// what the partner's enable and disable do, and the operator's.
pub(crate) async fn change_status(
    state: &AppState,
    partner: &str,
    id: &str,
    status: EndpointStatus,
    reason: Option<&str>,
) -> Result<(Endpoint, StatusEffects), Problem> {
    let (e, effects) = for_partner(&state.shared.db, partner)
        .set_status(
            id,
            status,
            reason,
            state.shared.clock.now_ms(),
            state.shared.config.api.replay_window_ms(),
        )
        .await?
        .ok_or_else(not_found)?;
    state.engine.fanout.do_send(EndpointChanged(e.id.clone()));
    Ok((e, effects))
}

/// Queues a manual attempt of every failed or dead delivery of one of
/// `partner`'s endpoints in the range `input` asks for ([`acts::recover`])
/// and tells the fanout: what the partner's recover does, and the
/// operator's. Returns (since, until, how many).
pub(crate) async fn recover_range(
    state: &AppState,
    partner: &str,
    id: &str,
    input: &Recover,
) -> Result<(i64, i64, u64), Problem> {
    let shared = &state.shared;
    let now = shared.clock.now_ms();
    let recovered =
        acts::recover(&shared.db, &shared.config.api, (partner, id), input, now).await?;
    state.engine.fanout.do_send(EndpointChanged(id.to_string()));
    Ok(recovered)
}
