//! `POST /v1/admin/partners/{id}/portal-links`: a one-time link into a
//! partner's portal. A reseller mints it in its own product (with an
//! operator key) and sends its user over; the link works once, within 10
//! minutes, and opens a 12-hour portal session.

use actix_web::{HttpRequest, HttpResponse, post, web};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use utoipa::ToSchema;

use super::{
    AppState, admin_audit, origin,
    partner::time,
    problem::{Errors, Problem},
};
use crate::store::{self, audit::Action, portal_links::Minted};

/// How long a link may wait to be used.
pub const LINK_TTL_MS: i64 = 10 * 60_000;

#[derive(Debug, Serialize, ToSchema)]
pub struct PortalLink {
    pub id: String,
    /// Open this once, before `expires_at`, to sign in to the partner's portal.
    pub url: String,
    pub expires_at: String,
}

/// Mint a one-time sign-in link to a partner's portal.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 201, description = "Created: a one-time sign-in link to the partner's portal", body = PortalLink), Errors))]
#[post("/v1/admin/partners/{id}/portal-links")]
pub async fn create_portal_link(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let actor = admin_audit::operator(&req, &state).await?;
    let now = state.shared.clock.now_ms();
    let (minted, expires) = mint(&state.shared.db, &id, &actor.key_id, now).await?;
    let base = origin::expected(&req, &state.shared.config.http)
        .map(|o| o.as_str().to_string())
        .unwrap_or_default();
    actor
        .record(
            &state,
            Action::PortalLinkCreate,
            &minted.id,
            &id,
            serde_json::json!({"expires_at": time(expires)}),
        )
        .await?;
    Ok(HttpResponse::Created().json(PortalLink::of(&base, minted, expires)))
}

/// Mints a link into `partner`'s portal for the key `key_id` at `now`
/// (404 for no such partner); returns it and when it expires. The API's
/// action and the command line's.
pub async fn mint(
    db: &DatabaseConnection,
    partner: &str,
    key_id: &str,
    now: i64,
) -> Result<(Minted, i64), Problem> {
    if store::partners::find(db, partner).await?.is_none() {
        return Err(Problem::not_found("no such partner"));
    }
    let expires = now + LINK_TTL_MS;
    let minted = store::portal_links::mint(db, partner, key_id, now, expires).await?;
    Ok((minted, expires))
}

impl PortalLink {
    /// The answer for a link minted at hookd reached at `base` (its origin).
    pub fn of(base: &str, minted: Minted, expires: i64) -> PortalLink {
        PortalLink {
            url: format!("{base}/portal/link/{}", minted.token),
            id: minted.id,
            expires_at: time(expires),
        }
    }
}
