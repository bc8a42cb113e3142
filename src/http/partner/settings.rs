//! `GET`/`PATCH /v1/partner`: a partner reads and sets its notification
//! channel; `GET`/`PATCH /v1/admin/partners/{id}` do the same for an
//! operator. The notification URL is checked like an endpoint's; its
//! secret is in the answer that first set it, and only there.

use actix_web::{HttpRequest, HttpResponse, get, patch, web};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use super::time;
use crate::{
    delivery::messages::EndpointChanged,
    http::{
        AppState, auth,
        problem::{Errors, Problem},
    },
    store::{
        audit::Action,
        partner_settings::{self, Channel, UrlChange},
        partners::Partner,
    },
};

/// A partner and where its endpoint notices go.
#[derive(Debug, Serialize, ToSchema)]
pub struct PartnerSettings {
    pub id: String,
    pub name: String,
    pub status: String,
    pub created_at: String,
    /// Mailed every `endpoint.failing`, `endpoint.disabled` and
    /// `endpoint.recovered` (when the operator configured mail).
    pub notification_email: Option<String>,
    /// Sent the same notices as signed webhooks; never disabled by failures.
    pub notification_url: Option<String>,
    /// The notification URL's endpoint: its deliveries, test and secret
    /// rotation are under `/v1/endpoints/{id}`.
    pub notification_endpoint_id: Option<String>,
    /// The notification URL's signing secret: only in the answer that set
    /// a URL where there was none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_secret: Option<String>,
}

impl PartnerSettings {
    fn new(p: Partner, c: Channel, secret: Option<String>) -> PartnerSettings {
        let (endpoint_id, url) = c.notification_url.unzip();
        PartnerSettings {
            id: p.id,
            name: p.name,
            status: p.status,
            created_at: time(p.created_at),
            notification_email: c.notification_email,
            notification_url: url,
            notification_endpoint_id: endpoint_id,
            notification_secret: secret,
        }
    }
}

/// `null` removes a setting; an absent field keeps it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePartnerSettings {
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, format = "email", max_length = 254)]
    pub notification_email: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, format = "uri", max_length = 2048)]
    pub notification_url: Option<Option<String>>,
}

/// A field that is present, possibly `null`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

pub(crate) async fn read(state: &AppState, partner_id: &str) -> Result<PartnerSettings, Problem> {
    let (p, c) = partner_settings::channel(&state.shared.db, partner_id)
        .await?
        .ok_or_else(|| Problem::not_found("no such partner"))?;
    Ok(PartnerSettings::new(p, c, None))
}

/// Checks and applies a change; the answer carries a new URL's secret.
pub(crate) async fn apply(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
    partner_id: &str,
) -> Result<PartnerSettings, Problem> {
    let input: UpdatePartnerSettings = state.read_json(req, payload).await?;
    change(state, partner_id, input).await
}

/// Checks and applies a change however it was asked for (the API's JSON,
/// the portal's form); the answer carries a new URL's secret.
pub(crate) async fn change(
    state: &AppState,
    partner_id: &str,
    input: UpdatePartnerSettings,
) -> Result<PartnerSettings, Problem> {
    let email = match input.notification_email {
        Some(Some(e)) => Some(Some(checked_email(&e)?)),
        other => other,
    };
    let url = match input.notification_url {
        None => UrlChange::Keep,
        Some(None) => UrlChange::Remove,
        Some(Some(u)) => UrlChange::Set(super::endpoints::checked_url(state, &u).await?),
    };
    let changed_url = url != UrlChange::Keep;
    let before = partner_settings::channel(&state.shared.db, partner_id).await?;
    let (p, c, secret) = partner_settings::update(
        &state.shared.db,
        &state.shared.secrets,
        partner_id,
        email,
        url,
        state.shared.config.delivery.default_concurrency,
        state.shared.clock.now_ms(),
    )
    .await?
    .ok_or_else(|| Problem::not_found("no such partner"))?;
    if changed_url {
        let ids = before
            .and_then(|(_, c)| c.notification_url)
            .into_iter()
            .chain(c.notification_url.clone())
            .map(|(id, _)| id);
        for id in ids {
            state.engine.fanout.do_send(EndpointChanged(id));
        }
    }
    Ok(PartnerSettings::new(p, c, secret.map(|s| s.expose())))
}

fn checked_email(text: &str) -> Result<String, Problem> {
    crate::domain::partner::notification_email(text)
        .map_err(|e| Problem::invalid("notification_email", e.to_string()))
}

/// Your partner record and notification channel.
#[utoipa::path(tag = "partner", security(("partner_key" = [])),
    responses((status = 200, description = "Your partner record", body = PartnerSettings), Errors))]
#[get("/v1/partner")]
pub async fn get_partner(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    Ok(HttpResponse::Ok().json(read(&state, &partner).await?))
}

/// Set where your endpoint notices go: `notification_email` and
/// `notification_url` (`null` removes one). A new URL's secret is in this
/// answer only.
#[utoipa::path(tag = "partner", request_body = UpdatePartnerSettings, security(("partner_key" = [])),
    responses((status = 200, description = "Your partner record as changed", body = PartnerSettings), Errors))]
#[patch("/v1/partner")]
pub async fn update_partner(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let partner = auth::partner(&req, &state).await?;
    Ok(HttpResponse::Ok().json(apply(&req, payload, &state, &partner).await?))
}

/// A partner with its notification channel.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), security(("operator_key" = [])),
    responses((status = 200, description = "The partner's record", body = PartnerSettings), Errors))]
#[get("/v1/admin/partners/{id}")]
pub async fn admin_get_partner(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    auth::operator(&req, &state).await?;
    Ok(HttpResponse::Ok().json(read(&state, &id).await?))
}

/// Set a partner's notification channel, as `PATCH /v1/partner` does.
#[utoipa::path(tag = "admin", params(("id" = String, Path)), request_body = UpdatePartnerSettings,
    security(("operator_key" = [])), responses((status = 200, description = "The partner's record as changed", body = PartnerSettings), Errors))]
#[patch("/v1/admin/partners/{id}")]
pub async fn admin_update_partner(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let actor = crate::http::admin_audit::operator(&req, &state).await?;
    let settings = apply(&req, payload, &state, &id).await?;
    let detail = serde_json::json!({
        "notification_email": settings.notification_email,
        "notification_url": settings.notification_url,
    });
    actor
        .record(&state, Action::PartnerUpdate, &id, &id, detail)
        .await?;
    Ok(HttpResponse::Ok().json(settings))
}
