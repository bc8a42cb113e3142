//! The portal's forms: each checks that it was posted from this site with
//! the session's CSRF token (otherwise nothing is done), then calls the
//! same operation as the Partner API, for the signed-in partner only. A
//! new secret is shown in the page that answers the post, and only there.

use actix_web::{HttpRequest, HttpResponse, web};
use maud::html;

use super::{
    Signed, cross_site,
    form::{self, Draft, Fields},
    pages,
    views::{delivery_page, endpoint_page, endpoint_page_with, run},
};
use crate::{
    http::{
        AppState,
        partner::{
            deliveries::queue_replay,
            endpoint_ops as ops,
            endpoint_shapes::{CreateEndpoint, Recover, RotateSecret, SchemeIn, UpdateEndpoint},
            settings::{self, UpdatePartnerSettings},
        },
        problem::Problem,
    },
    store::endpoints::EndpointStatus,
};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/portal/endpoints", web::post().to(create))
        .route("/portal/endpoints/{id}", web::post().to(edit))
        .route(
            "/portal/endpoints/{id}/{action}",
            web::post().to(endpoint_action),
        )
        .route("/portal/deliveries/{id}/replay", web::post().to(replay))
        .route("/portal/settings", web::post().to(save_settings));
}

/// `usage.*, balance.updated` as a list.
fn types(fields: &Fields) -> Vec<String> {
    form::text(fields, "event_types")
        .map(|t| {
            t.split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn done(text: &str) -> maud::Markup {
    html! { p.done role="status" { (text) } }
}

/// Reads a genuine form and runs `act` with it, or refuses a forged one.
/// (`genuine!(req, payload, state, limit, |s, fields| …)` reads up to
/// `limit` bytes instead of `form::LIMIT`.)
macro_rules! genuine {
    ($req:ident, $payload:ident, $state:ident, |$s:ident, $fields:ident| $body:expr) => {
        genuine!($req, $payload, $state, form::LIMIT, |$s, $fields| $body)
    };
    ($req:ident, $payload:ident, $state:ident, $limit:expr, |$s:ident, $fields:ident| $body:expr) => {{
        let $req = &$req;
        let $state: &AppState = &$state;
        run($req, $state, |$s| async move {
            let Some($fields) = form::genuine($req, $payload, $state, &$s, $limit).await? else {
                return Ok(cross_site());
            };
            $body
        })
        .await
    }};
}

pub(super) use genuine;

/// The form's `signature_scheme` (`v1` or `v1a`); absent or other: `v1`.
pub(super) fn scheme(fields: &form::Fields) -> Option<SchemeIn> {
    (form::text(fields, "signature_scheme") == Some("v1a")).then_some(SchemeIn::V1a)
}

async fn create(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    genuine!(req, payload, state, |s, fields| {
        let input = CreateEndpoint {
            ordering: None,
            ordering_on_dead: None,
            filter: None,
            url: form::text(&fields, "url").unwrap_or_default().to_string(),
            description: form::text(&fields, "description").map(str::to_string),
            event_types: Some(types(&fields)),
            schema_version: None,
            schema_versions: None,
            concurrency: None,
            rate_limit: None,
            status: None,
            signature_scheme: scheme(&fields),
        };
        let (e, secret) = ops::create(state, &s.partner_id, input).await?;
        let shown = html! { (done("Endpoint created.")) (pages::secret_box(&secret.shown())) };
        endpoint_page(state, &s, &e.id, shown).await
    })
}

/// What the edit form asks to change.
fn edited(fields: &Fields) -> Result<UpdateEndpoint, Problem> {
    Ok(UpdateEndpoint {
        url: form::text(fields, "url").map(str::to_string),
        description: Some(fields.get("description").cloned().unwrap_or_default()),
        event_types: Some(types(fields)),
        ordering: form::chosen(fields, "ordering")?,
        ordering_on_dead: form::chosen(fields, "ordering_on_dead")?,
        ..UpdateEndpoint::default()
    })
}

async fn edit(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    genuine!(req, payload, state, |s, fields| {
        ops::changeable(state, &s.partner_id, &id).await?;
        let said = async {
            ops::update(state, &s.partner_id, &id, edited(&fields)?).await?;
            Ok::<_, Problem>(done("Saved."))
        }
        .await;
        answer_form(state, &s, &id, fields, "edit-form", said).await
    })
}

/// The endpoint page after one of its forms: what was done, above it; or,
/// for a refused form (422), the form shown again as it was sent, with why
/// at its field (`form`, the form's id, when the refusal names none).
pub(super) async fn answer_form(
    state: &AppState,
    s: &Signed,
    id: &str,
    fields: Fields,
    form: &str,
    outcome: Result<maud::Markup, Problem>,
) -> Result<HttpResponse, Problem> {
    match outcome {
        Ok(said) => endpoint_page(state, s, id, said).await,
        Err(p) if p.status == 422 => {
            let draft = Draft::refused(fields, &p, form);
            endpoint_page_with(state, s, id, html! {}, &draft).await
        }
        Err(p) => Err(p),
    }
}

async fn endpoint_action(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, action) = path.into_inner();
    genuine!(req, payload, state, |s, fields| {
        let partner = s.partner_id.as_str();
        let shown = match action.as_str() {
            "enable" | "disable" => {
                let (status, reason) = if action == "enable" {
                    (EndpointStatus::Active, None)
                } else {
                    (EndpointStatus::Disabled, Some("disabled by the partner"))
                };
                ops::change_status(state, partner, &id, status, reason).await?;
                done(if action == "enable" {
                    "Enabled."
                } else {
                    "Disabled."
                })
            }
            "test" => {
                let (event, _) = ops::send_test(state, partner, &id).await?;
                done(&format!("Test event {event} sent."))
            }
            "rotate" => {
                let overlap = form::text(&fields, "overlap_seconds").and_then(|o| o.parse().ok());
                let input = RotateSecret {
                    overlap_seconds: overlap,
                    scheme: scheme(&fields),
                };
                let (secret, until) = ops::rotate(state, partner, &id, &input).await?;
                let until = crate::domain::event::format_time(until);
                html! {
                    (done(&format!("Secret rotated; the previous one signs until {until}.")))
                    (pages::secret_box(&secret.shown()))
                }
            }
            "expire-previous" => {
                let n = ops::expire_previous(state, partner, &id).await?;
                done(&format!("{n} previous secret(s) stopped signing."))
            }
            "recover" => {
                let input = Recover {
                    since: form::text(&fields, "since").unwrap_or_default().to_string(),
                    until: form::text(&fields, "until").map(str::to_string),
                };
                let (_, _, n) = ops::recover_range(state, partner, &id, &input).await?;
                done(&format!("{n} deliveries are being sent again."))
            }
            _ => return Err(Problem::not_found("no such action")),
        };
        endpoint_page(state, &s, &id, shown).await
    })
}

async fn replay(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    genuine!(req, payload, state, |s, _fields| {
        let queued = queue_replay(state, &s.partner_id, &id).await?;
        let said = match queued.waiting_for {
            None => "Sent again now.".to_string(),
            Some(why) => format!("Queued: {why}."),
        };
        delivery_page(state, &s, &id, done(&said)).await
    })
}

async fn save_settings(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    genuine!(req, payload, state, |s, fields| {
        // An empty field removes the setting.
        let field = |name| Some(form::text(&fields, name).map(str::to_string));
        let input = UpdatePartnerSettings {
            notification_email: field("notification_email"),
            notification_url: field("notification_url"),
        };
        let changed = settings::change(state, &s.partner_id, input).await?;
        let shown = match &changed.notification_secret {
            Some(secret) => html! { (done("Saved.")) (pages::secret_box(secret)) },
            None => done("Saved."),
        };
        Ok(pages::settings(&changed, &s.csrf, shown))
    })
}
