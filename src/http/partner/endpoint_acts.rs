//! What rotating a secret, ending the overlap, sending a test event and
//! recovering a time range do to one of a partner's endpoints, whoever asks:
//! the partner API, the operator API, the portal, the dashboard or the
//! command line. Each checks its input and acts through the partner's
//! scoped store at `now`; telling the engine is the caller's (the API's
//! fanout, the CLI's change notice).

use sea_orm::DatabaseConnection;

use super::endpoint_shapes::{Recover, RotateSecret};
use crate::{
    config::ApiConfig,
    domain::{
        event::{NewEvent, Subject},
        ids::EventId,
    },
    http::{body, problem::Problem},
    secret::SecretBox,
    signing::SigningKey,
    store::scoped::for_partner,
};

pub(crate) fn not_found() -> Problem {
    Problem::not_found("no such endpoint")
}

/// A new secret for the partner's endpoint `id`; the others keep signing
/// for the overlap (`api.max_secret_overlap` at most). Returns the secret
/// (shown once) and when the others stop.
pub(crate) async fn rotate(
    db: &DatabaseConnection,
    secrets: &SecretBox,
    api: &ApiConfig,
    (partner, id): (&str, &str),
    input: &RotateSecret,
    now: i64,
) -> Result<(SigningKey, i64), Problem> {
    let max = api.max_secret_overlap.as_secs();
    let overlap = input.overlap_seconds.unwrap_or(86_400);
    if overlap > max {
        return Err(Problem::out_of_range(
            "overlap_seconds",
            format!("overlap_seconds must be between 0 and {max}"),
        ));
    }
    for_partner(db, partner)
        .rotate_secret(
            secrets,
            id,
            input.scheme.unwrap_or_default().into(),
            overlap as i64 * 1000,
            now,
        )
        .await?
        .ok_or_else(not_found)
}

/// Ends the rotation overlap now; how many secrets stopped signing.
pub(crate) async fn expire_previous(
    db: &DatabaseConnection,
    (partner, id): (&str, &str),
    now: i64,
) -> Result<u64, Problem> {
    for_partner(db, partner)
        .expire_previous_secrets(id, now)
        .await?
        .ok_or_else(not_found)
}

/// Queues a `webhook.test` event for the partner's endpoint `id` only;
/// returns (event id, delivery id). The engine sends it.
pub(crate) async fn send_test(
    db: &DatabaseConnection,
    (partner, id): (&str, &str),
    now: i64,
) -> Result<(String, String), Problem> {
    let event = NewEvent {
        id: EventId::generate(),
        event_type: "webhook.test".into(),
        partner_id: partner.to_string(),
        subject: Some(Subject {
            subject_type: "endpoint".into(),
            id: id.to_string(),
            version: None,
        }),
        occurred_at_ms: now,
        occurred_at_given: true,
        schema_version: 1,
        payload: serde_json::json!({"endpoint_id": id, "message": "a test event from hookd"})
            .to_string(),
        correlation_id: None,
        renditions: Default::default(),
        trace: None,
    };
    let delivery_id = for_partner(db, partner)
        .send_test(id, &event, now)
        .await?
        .ok_or_else(not_found)?;
    Ok((event.id.to_string(), delivery_id))
}

/// Queues a manual attempt of every failed or dead delivery of the
/// partner's endpoint `id` in the range `input` asks for, which must lie
/// within the replay window. Returns (since, until, how many).
pub(crate) async fn recover(
    db: &DatabaseConnection,
    api: &ApiConfig,
    (partner, id): (&str, &str),
    input: &Recover,
    now: i64,
) -> Result<(i64, i64, u64), Problem> {
    let since = body::time("since", &input.since)?;
    let until = input
        .until
        .as_deref()
        .map(|u| body::time("until", u))
        .transpose()?
        .unwrap_or(now);
    let window = api.replay_window_ms();
    if since < now - window {
        return Err(Problem::out_of_range(
            "since",
            format!(
                "since must be within the replay window ({} days)",
                window / 86_400_000
            ),
        ));
    }
    if until <= since {
        return Err(Problem::out_of_range("until", "until must be after since"));
    }
    let replayed = for_partner(db, partner)
        .recover(id, since, until, now)
        .await?
        .ok_or_else(not_found)?;
    Ok((since, until, replayed))
}
