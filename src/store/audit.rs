//! The audit log: who (a key id, never the key) did what to which object,
//! when, through which door and from which address. Every operator action
//! writes one entry; the log is read newest first.

use sea_orm::ConnectionTrait;

use super::{StoreError, query_all, scoped::Position, search::Search, sql};
use crate::domain::ids::new_id;

/// The door an action came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Api,
    Dashboard,
    /// The `hookd` command line, run by someone with the database's credentials.
    Cli,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Api => "api",
            Via::Dashboard => "dashboard",
            Via::Cli => "cli",
        }
    }
}

/// What was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    DeliveryReplay,
    /// A dead head let go of its subject.
    DeliverySkip,
    EndpointRecover,
    EndpointEnable,
    EndpointDisable,
    EndpointUpdate,
    EndpointDelete,
    /// An endpoint's receiver credentials set or removed.
    EndpointAuth,
    /// A new signing secret for an endpoint (never the secret itself).
    EndpointSecretRotate,
    /// An endpoint's rotation overlap ended: only its newest secret signs.
    EndpointSecretExpire,
    /// A `webhook.test` event sent to one endpoint.
    EndpointTest,
    /// The conformance suite sent to an endpoint.
    EndpointCheck,
    /// Events published from the command line.
    EventPublish,
    /// An incident opened by hand, its partner told.
    IncidentOpen,
    /// An incident resolved by hand, its partner told.
    IncidentResolve,
    KeyRevoke,
    PartnerUpdate,
    PortalLinkCreate,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::DeliveryReplay => "delivery.replay",
            Action::DeliverySkip => "delivery.skip",
            Action::EndpointRecover => "endpoint.recover",
            Action::EndpointEnable => "endpoint.enable",
            Action::EndpointDisable => "endpoint.disable",
            Action::EndpointUpdate => "endpoint.update",
            Action::EndpointDelete => "endpoint.delete",
            Action::EndpointAuth => "endpoint.auth",
            Action::EndpointSecretRotate => "endpoint.secret_rotate",
            Action::EndpointSecretExpire => "endpoint.secret_expire_previous",
            Action::EndpointTest => "endpoint.test",
            Action::EndpointCheck => "endpoint.check",
            Action::EventPublish => "event.publish",
            Action::IncidentOpen => "incident.open",
            Action::IncidentResolve => "incident.resolve",
            Action::KeyRevoke => "key.revoke",
            Action::PartnerUpdate => "partner.update",
            Action::PortalLinkCreate => "portal_link.create",
        }
    }
}

/// One action, to be written.
#[derive(Debug, Clone)]
pub struct Entry {
    pub at: i64,
    pub key_id: String,
    pub via: Via,
    pub action: Action,
    /// The object acted on (`dlv_…`, `ep_…`).
    pub target: String,
    /// The partner whose object it is.
    pub partner_id: Option<String>,
    /// The action's parameters and results (a JSON object).
    pub detail: serde_json::Value,
    pub remote_addr: String,
}

/// One entry as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub id: String,
    pub at: i64,
    pub key_id: String,
    pub via: String,
    pub action: String,
    pub target: String,
    pub partner_id: Option<String>,
    pub detail: serde_json::Value,
    pub remote_addr: String,
}

/// Writes one entry (inside the caller's transaction when `db` is one);
/// returns its id.
pub async fn record(db: &impl ConnectionTrait, e: &Entry) -> Result<String, StoreError> {
    let id = new_id("aud");
    db.execute_raw(sql(
        db.get_database_backend(),
        "INSERT INTO audit (id, at, key_id, via, action, target, partner_id, detail, remote_addr) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        vec![
            id.clone().into(),
            e.at.into(),
            e.key_id.clone().into(),
            e.via.as_str().into(),
            e.action.as_str().into(),
            e.target.clone().into(),
            e.partner_id.clone().into(),
            e.detail.to_string().into(),
            e.remote_addr.clone().into(),
        ],
    ))
    .await?;
    Ok(id)
}

/// The log's filters; every field narrows it.
#[derive(Debug, Default, Clone)]
pub struct AuditFilter {
    pub action: Option<String>,
    pub target: Option<String>,
    pub partner_id: Option<String>,
}

/// Entries newest first, before `before`.
pub async fn list(
    db: &impl ConnectionTrait,
    f: &AuditFilter,
    before: Option<&Position>,
    limit: u32,
) -> Result<Vec<Recorded>, StoreError> {
    let mut search = Search::new(
        "SELECT id, at, key_id, via, action, target, partner_id, detail, remote_addr FROM audit WHERE 1 = 1",
        vec![],
    );
    search
        .and_some("action = ?", f.action.clone())
        .and_some("target = ?", f.target.clone())
        .and_some("partner_id = ?", f.partner_id.clone());
    let stmt = search
        .newest_first("at", "id", before, limit)
        .statement(db.get_database_backend());
    let rows = query_all(db, stmt, |r| {
        Ok((
            Recorded {
                id: r.try_get("", "id")?,
                at: r.try_get("", "at")?,
                key_id: r.try_get("", "key_id")?,
                via: r.try_get("", "via")?,
                action: r.try_get("", "action")?,
                target: r.try_get("", "target")?,
                partner_id: r.try_get("", "partner_id")?,
                detail: serde_json::Value::Null,
                remote_addr: r.try_get("", "remote_addr")?,
            },
            r.try_get::<String>("", "detail")?,
        ))
    })
    .await?;
    rows.into_iter()
        .map(|(mut entry, detail)| {
            entry.detail = serde_json::from_str(&detail).map_err(|e| {
                StoreError::Corrupt(format!("audit entry {}: detail: {e}", entry.id))
            })?;
            Ok(entry)
        })
        .collect()
}
