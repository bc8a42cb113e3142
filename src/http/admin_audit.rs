//! The audit log at the HTTP edge: who is acting and from where (the
//! [`Actor`] every operator action writes its entry as), and
//! `GET /v1/admin/audit`, the log newest first. An operator key only.

use actix_web::{HttpRequest, HttpResponse, get, web};
use sea_orm::DatabaseConnection;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    AppState, auth, body, client_ip,
    page::{self, Page},
    partner::time,
    problem::{Errors, Problem},
};
use crate::{
    config::ApiConfig,
    store::audit::{self, Action, AuditFilter, Entry, Recorded, Via},
};

/// Who acts, through which door, from which address.
#[derive(Debug, Clone)]
pub struct Actor {
    pub key_id: String,
    pub via: Via,
    pub remote_addr: String,
}

/// The client address of a request, as `http.trust_proxy` lets us know it.
pub fn remote_addr(req: &HttpRequest, state: &AppState) -> String {
    client_ip::of(req.head(), &state.shared.config.http.trust_proxy)
        .map_or_else(|| "unknown".to_string(), |a| a.to_string())
}

/// The operator behind an API request (403 for any other key).
pub async fn operator(req: &HttpRequest, state: &AppState) -> Result<Actor, Problem> {
    let key_id = auth::operator(req, state).await?;
    Ok(Actor {
        key_id,
        via: Via::Api,
        remote_addr: remote_addr(req, state),
    })
}

impl Actor {
    /// Writes this actor's entry for an action that has just succeeded.
    pub async fn record(
        &self,
        state: &AppState,
        action: Action,
        target: &str,
        partner_id: &str,
        detail: serde_json::Value,
    ) -> Result<(), Problem> {
        let entry = Entry {
            at: state.shared.clock.now_ms(),
            key_id: self.key_id.clone(),
            via: self.via,
            action,
            target: target.to_string(),
            partner_id: Some(partner_id.to_string()),
            detail,
            remote_addr: self.remote_addr.clone(),
        };
        audit::record(&state.shared.db, &entry).await.map_err(|e| {
            tracing::error!(action = action.as_str(), target, error = %e,
                "the action succeeded but its audit entry was not written");
            Problem::from(e)
        })?;
        Ok(())
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this action, e.g. `endpoint.disable`.
    pub action: Option<String>,
    /// Only actions on this object, e.g. an endpoint id.
    pub target: Option<String>,
    /// Only actions on this partner's objects.
    pub partner_id: Option<String>,
    /// The `next_cursor` of the previous page.
    pub after: Option<String>,
    pub limit: Option<i64>,
}

/// One operator action.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEntry {
    pub id: String,
    pub at: String,
    /// The key that acted, by id.
    pub key_id: String,
    /// `api`, `dashboard` or `cli`.
    pub via: String,
    /// What was done: `delivery.replay`, `delivery.skip`, `endpoint.recover`,
    /// `endpoint.enable`, `endpoint.disable`, `endpoint.secret_rotate`,
    /// `endpoint.secret_expire_previous`, `endpoint.test`, `endpoint.check`,
    /// `event.publish`, ….
    pub action: String,
    /// The object acted on.
    pub target: String,
    pub partner_id: Option<String>,
    /// The action's parameters and results.
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
    /// The client address the request came from.
    pub remote_addr: String,
}

impl From<Recorded> for AuditEntry {
    fn from(r: Recorded) -> Self {
        AuditEntry {
            id: r.id,
            at: time(r.at),
            key_id: r.key_id,
            via: r.via,
            action: r.action,
            target: r.target,
            partner_id: r.partner_id,
            detail: r.detail,
            remote_addr: r.remote_addr,
        }
    }
}

/// The audit log of operator actions, newest first.
#[utoipa::path(tag = "admin", params(AuditQuery), security(("operator_key" = [])),
    responses((status = 200, description = "A page of the audit log, newest first", body = Page<AuditEntry>), Errors))]
#[get("/v1/admin/audit")]
pub async fn list_audit(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: AuditQuery = body::query(req.query_string())?;
    let page = read(&state.shared.db, &state.shared.config.api, q).await?;
    Ok(HttpResponse::Ok().json(page))
}

/// A page of the log as `q` asks for it: the API's answer, and the
/// command line's (`hookd audit list`).
pub async fn read(
    db: &DatabaseConnection,
    api: &ApiConfig,
    q: AuditQuery,
) -> Result<Page<AuditEntry>, Problem> {
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    let before = q.after.as_deref().map(page::decode_position).transpose()?;
    let filter = AuditFilter {
        action: q.action,
        target: q.target,
        partner_id: q.partner_id,
    };
    let rows = audit::list(db, &filter, before.as_ref(), limit).await?;
    Ok(Page::of(
        rows,
        limit,
        |r| (r.at, r.id.as_str()),
        AuditEntry::from,
    ))
}
