//! Endpoint notices beyond the partner's own endpoints (see
//! [`crate::notify`]): when the fanout publishes one, the operator's copy
//! and the mails are written in the same transaction, at most once each.
//! Also the operator's notification endpoint, kept as configured.

use sea_orm::{ConnectionTrait, DatabaseConnection, TransactionTrait, Value};

use super::{
    StoreError,
    endpoints::{EndpointStatus, Kind, NewEndpoint},
    fanout::Published,
    sql,
};
use crate::{
    domain::{
        event::{NewEvent, Subject, format_time},
        ids::{EventId, new_id},
    },
    notify::{OPERATOR_PARTNER, Routes, mail::Audience, mail_text, operator_copy},
    secret::{Secret, SecretBox},
};

/// Whether [`expand`] has anything to write for `events`.
pub fn expands(events: &[Published<'_>], routes: &Routes) -> bool {
    routes.any()
        && events
            .iter()
            .any(|e| crate::notify::is_notice(e.event_type, e.partner_id))
}

/// For each notice among `events`: the operator's copy (an unpublished
/// event of the operator's partner) and the mails. Inside the publishing
/// transaction, so a notice is announced once however often it is claimed.
pub async fn expand(
    txn: &impl ConnectionTrait,
    events: &[Published<'_>],
    routes: &Routes,
    now_ms: i64,
) -> Result<(), StoreError> {
    if !expands(events, routes) {
        return Ok(());
    }
    let notices: Vec<&Published<'_>> = events
        .iter()
        .filter(|e| crate::notify::is_notice(e.event_type, e.partner_id))
        .collect();
    let mut copies = Vec::new();
    for e in &notices {
        if routes.operator_copy
            && let Some(payload) = operator_copy(e.payload, e.partner_id)
        {
            copies.push(NewEvent {
                id: EventId::generate(),
                event_type: e.event_type.to_string(),
                partner_id: OPERATOR_PARTNER.into(),
                subject: e.subject_id.map(|id| Subject {
                    subject_type: e.subject_type.unwrap_or("endpoint").into(),
                    id: id.into(),
                    version: None,
                }),
                occurred_at_ms: now_ms,
                occurred_at_given: true,
                schema_version: e.schema_version,
                payload,
                correlation_id: Some(e.id.to_string()),
                renditions: Default::default(),
                trace: None,
            });
        }
        if routes.mail {
            queue_mails(txn, e, routes.operator_email.as_deref(), now_ms).await?;
        }
    }
    super::outbox::insert(txn, &copies, now_ms).await
}

async fn queue_mails(
    txn: &impl ConnectionTrait,
    e: &Published<'_>,
    operator_email: Option<&str>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let backend = txn.get_database_backend();
    let partner = txn
        .query_one_raw(sql(
            backend,
            "SELECT name, notification_email FROM partner WHERE id = ?",
            vec![e.partner_id.into()],
        ))
        .await?;
    let (name, email): (String, Option<String>) = match partner {
        Some(r) => (r.try_get("", "name")?, r.try_get("", "notification_email")?),
        None => (e.partner_id.to_string(), None),
    };
    let data: serde_json::Value = serde_json::from_str(e.payload).unwrap_or_default();
    let at = format_time(now_ms);
    let recipients = [
        (Audience::Partner, email.as_deref()),
        (Audience::Operator, operator_email),
    ];
    for (audience, to) in recipients {
        let Some(to) = to else { continue };
        let text = mail_text(e.event_type, &data, (e.partner_id, &name), audience, &at);
        txn.execute_raw(sql(
            backend,
            "INSERT INTO mail (id, event_id, partner_id, audience, recipient, subject, body, state, \
             attempts, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) \
             ON CONFLICT (event_id, audience) DO NOTHING",
            vec![
                new_id("mail").into(),
                e.id.into(),
                e.partner_id.into(),
                audience.as_str().into(),
                to.into(),
                text.subject.into(),
                text.body.into(),
                now_ms.into(),
                now_ms.into(),
            ],
        ))
        .await?;
    }
    Ok(())
}

/// Makes the operator's notification endpoint what the configuration says:
/// `Some((url, secret))` creates it or updates its URL and secret and
/// enables it; `None` disables it (what it holds is paused). The URL was
/// checked against the egress policy by the caller.
pub async fn sync_operator(
    db: &DatabaseConnection,
    secrets: &SecretBox,
    wanted: Option<(&str, &Secret)>,
    default_concurrency: u32,
    now_ms: i64,
) -> Result<(), StoreError> {
    let backend = db.get_database_backend();
    let existing = db
        .query_one_raw(sql(
            backend,
            "SELECT id FROM endpoint WHERE partner_id = ? AND kind = ?",
            vec![OPERATOR_PARTNER.into(), Kind::Operator.as_str().into()],
        ))
        .await?
        .map(|r| r.try_get::<String>("", "id"))
        .transpose()?;
    match (wanted, existing) {
        (None, None) => Ok(()),
        (None, Some(id)) => {
            super::endpoints::disable(db, &id, "notify.operator_url is not set", now_ms).await?;
            Ok(())
        }
        (Some((url, secret)), None) => {
            // The operator's partner exists only while there is an operator URL.
            db.execute_raw(sql(
                backend,
                "INSERT INTO partner (id, name, status, created_at) VALUES (?, 'hookd operator', 'active', ?) \
                 ON CONFLICT (id) DO NOTHING",
                vec![OPERATOR_PARTNER.into(), now_ms.into()],
            ))
            .await?;
            let new = NewEndpoint {
                partner_id: OPERATOR_PARTNER.into(),
                url: url.into(),
                description: "notify.operator_url: every partner's endpoint notices".into(),
                event_types: vec!["endpoint.*".into(), "hookd.*".into()],
                schema_version: None,
                schema_versions: Default::default(),
                concurrency: default_concurrency,
                rate_limit: None,
                ordering: Default::default(),
                on_dead: Default::default(),
                filter: None,
                status: EndpointStatus::Active,
            };
            super::endpoints::create_of_kind(db, secrets, new, Kind::Operator, secret, now_ms)
                .await?;
            Ok(())
        }
        (Some((url, secret)), Some(id)) => {
            let txn = db.begin().await?;
            txn.execute_raw(sql(
                backend,
                "UPDATE endpoint SET url = ?, status = 'active', disabled_reason = NULL, updated_at = ? WHERE id = ?",
                vec![url.into(), now_ms.into(), id.clone().into()],
            ))
            .await?;
            super::paused::resume(&txn, &id, now_ms, i64::MAX).await?;
            txn.execute_raw(sql(
                backend,
                "DELETE FROM endpoint_secret WHERE endpoint_id = ?",
                vec![id.clone().into()],
            ))
            .await?;
            txn.execute_raw(sql(
                backend,
                "INSERT INTO endpoint_secret (id, endpoint_id, ciphertext, created_at, expires_at) VALUES (?, ?, ?, ?, NULL)",
                vec![
                    new_id("sec").into(),
                    id.clone().into(),
                    Value::from(secrets.seal(&id, secret)),
                    now_ms.into(),
                ],
            ))
            .await?;
            txn.commit().await?;
            Ok(())
        }
    }
}
