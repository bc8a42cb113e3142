//! Operator routes: partners and their keys. An operator key only.

use actix_web::{HttpRequest, HttpResponse, delete, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    AppState, auth, body,
    page::{self, Page},
    partner::time,
    problem::{Errors, Problem},
};
use crate::{
    domain::partner::{self, PartnerFieldError},
    store::{self, keys::Role},
};

#[derive(Debug, Serialize, ToSchema)]
pub struct PartnerOut {
    pub id: String,
    pub name: String,
    pub status: String,
    pub created_at: String,
}

impl From<store::partners::Partner> for PartnerOut {
    fn from(p: store::partners::Partner) -> Self {
        PartnerOut {
            id: p.id,
            name: p.name,
            status: p.status,
            created_at: time(p.created_at),
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePartner {
    /// 1 to 200 characters, not only spaces.
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: String,
    /// An id of your choosing: letters, digits, `_` and `-` (default a new `ptn_` id).
    #[schema(pattern = "^[A-Za-z0-9_-]{1,128}$")]
    pub id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyCreated {
    pub id: String,
    /// The key, shown this once; only its hash is stored.
    pub key: String,
    pub role: String,
    pub partner_id: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    pub after: Option<String>,
    pub limit: Option<i64>,
}

/// Create a partner.
#[utoipa::path(tag = "admin", request_body = CreatePartner, security(("operator_key" = [])),
    responses((status = 201, description = "Created: the partner", body = PartnerOut), Errors))]
#[post("/v1/admin/partners")]
pub async fn create_partner(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let input: CreatePartner = state.read_json(&req, payload).await?;
    let name = partner::name(&input.name).map_err(|e| match e {
        PartnerFieldError::NameLength => Problem::out_of_range("name", e.to_string()),
        _ => Problem::invalid("name", e.to_string()),
    })?;
    if let Some(id) = &input.id {
        partner::id(id).map_err(|e| Problem::invalid("id", e.to_string()))?;
        if store::partners::find(&state.shared.db, id).await?.is_some() {
            return Err(Problem::conflict(format!("partner {id} already exists")));
        }
    }
    let p = store::partners::create(
        &state.shared.db,
        input.id,
        name,
        state.shared.clock.now_ms(),
    )
    .await?;
    Ok(HttpResponse::Created().json(PartnerOut::from(p)))
}

/// List partners, oldest first.
#[utoipa::path(tag = "admin", params(ListQuery), security(("operator_key" = [])),
    responses((status = 200, description = "A page of partners, oldest first", body = Page<PartnerOut>), Errors))]
#[get("/v1/admin/partners")]
pub async fn list_partners(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let q: ListQuery = body::query(req.query_string())?;
    let api = &state.shared.config.api;
    let limit = page::limit(q.limit, api.page_size_default, api.page_size_max)?;
    let after = q.after.as_deref().map(page::decode_position).transpose()?;
    let rows = store::partners::list(&state.shared.db, after.as_ref(), limit).await?;
    Ok(HttpResponse::Ok().json(Page::of(
        rows,
        limit,
        |p| (p.created_at, p.id.as_str()),
        PartnerOut::from,
    )))
}

/// Create a partner key, shown this once.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 201, description = "Created: the key (shown this once)", body = KeyCreated), Errors))]
#[post("/v1/admin/partners/{id}/keys")]
pub async fn create_partner_key(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    let partner = store::partners::find(&state.shared.db, &id)
        .await?
        .ok_or_else(|| Problem::not_found("no such partner"))?;
    let key = store::keys::create(
        &state.shared.db,
        Role::Partner,
        Some(&partner.id),
        state.shared.clock.now_ms(),
    )
    .await?;
    // Usable at once, also from an address over its budget for failures.
    state.known_keys.changed().await;
    Ok(HttpResponse::Created().json(KeyCreated {
        id: key.id,
        key: key.key,
        role: "partner".into(),
        partner_id: Some(partner.id),
    }))
}

/// Revoke a key; it stops working at once.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 204, description = "Revoked"), Errors))]
#[delete("/v1/admin/keys/{id}")]
pub async fn revoke_key(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    if !store::keys::revoke(&state.shared.db, &id, state.shared.clock.now_ms()).await? {
        return Err(Problem::not_found("no such key, or already revoked"));
    }
    state.known_keys.changed().await;
    Ok(HttpResponse::NoContent().finish())
}
