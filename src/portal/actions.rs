//! The portal's forms: each checks that it was posted from this site with
//! the session's CSRF token (otherwise nothing is done), then calls the
//! same operation as the Partner API, for the signed-in partner only, and
//! answers as `answer` says: a redirect to the page the form belongs to,
//! which says once what was done (a new secret included), or that page
//! with the refused form as it was sent.

use actix_web::{HttpRequest, HttpResponse, web};

use super::{
    answer::{Done, Owner, answer},
    cross_site,
    flash::Flash,
    form::{self, Fields},
    views::run,
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
        let created = ops::create(state, &s.partner_id, input)
            .await
            .map(|(e, secret)| Done {
                flash: Flash::with_secret("Endpoint created.", secret.shown()),
                to: Some(Owner::Endpoint(&e.id).path()),
            });
        answer(state, &s, Owner::Endpoints, "create-form", fields, created).await
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
        let saved = async {
            ops::changeable(state, &s.partner_id, &id).await?;
            ops::update(state, &s.partner_id, &id, edited(&fields)?).await?;
            Ok(Flash::said("Saved.").into())
        }
        .await;
        answer(state, &s, Owner::Endpoint(&id), "edit-form", fields, saved).await
    })
}

/// Does the action `action` of endpoint `id` (its form's `fields`).
async fn act_on_endpoint(
    state: &AppState,
    partner: &str,
    id: &str,
    action: &str,
    fields: &Fields,
) -> Result<Done, Problem> {
    Ok(match action {
        "enable" | "disable" => {
            let (status, reason, said) = if action == "enable" {
                (EndpointStatus::Active, None, "Enabled.")
            } else {
                let reason = Some("disabled by the partner");
                (EndpointStatus::Disabled, reason, "Disabled.")
            };
            ops::change_status(state, partner, id, status, reason).await?;
            Flash::said(said).into()
        }
        "test" => {
            let (event, delivery) = ops::send_test(state, partner, id).await?;
            Done {
                flash: Flash::said(format!("Test event {event} sent.")),
                to: Some(format!("{}?test={delivery}", Owner::Endpoint(id).path())),
            }
        }
        "rotate" => {
            let overlap = form::text(fields, "overlap_seconds").and_then(|o| o.parse().ok());
            let input = RotateSecret {
                overlap_seconds: overlap,
                scheme: scheme(fields),
            };
            let (secret, until) = ops::rotate(state, partner, id, &input).await?;
            let until = crate::web::when::at(until);
            let said = format!("Secret rotated; the previous one signs until {until}.");
            Flash::with_secret(said, secret.shown()).into()
        }
        "expire-previous" => {
            let n = ops::expire_previous(state, partner, id).await?;
            Flash::said(format!("{n} previous secret(s) stopped signing.")).into()
        }
        "recover" => {
            let input = Recover {
                since: form::text(fields, "since").unwrap_or_default().to_string(),
                until: form::text(fields, "until").map(str::to_string),
            };
            let (_, _, n) = ops::recover_range(state, partner, id, &input).await?;
            Flash::said(format!("{n} deliveries are being sent again.")).into()
        }
        _ => return Err(Problem::not_found("no such action")),
    })
}

/// The form of the endpoint page that posts `action`.
fn form_of(action: &str) -> &'static str {
    match action {
        "enable" | "disable" => "status-form",
        "test" => "test-form",
        "rotate" => "rotate-form",
        "expire-previous" => "expire-form",
        _ => "recover-form",
    }
}

const ACTIONS: [&str; 6] = [
    "enable",
    "disable",
    "test",
    "rotate",
    "expire-previous",
    "recover",
];

async fn endpoint_action(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, action) = path.into_inner();
    genuine!(req, payload, state, |s, fields| {
        if !ACTIONS.contains(&action.as_str()) {
            return Err(Problem::not_found("no such action"));
        }
        let done = act_on_endpoint(state, &s.partner_id, &id, &action, &fields).await;
        let owner = Owner::Endpoint(&id);
        answer(state, &s, owner, form_of(&action), fields, done).await
    })
}

async fn replay(
    req: HttpRequest,
    id: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    genuine!(req, payload, state, |s, fields| {
        let queued = queue_replay(state, &s.partner_id, &id).await.map(|q| {
            Flash::said(match q.waiting_for {
                None => "Sent again now: reload to see the attempt.".to_string(),
                Some(why) => format!("Queued: {why}."),
            })
            .into()
        });
        answer(
            state,
            &s,
            Owner::Delivery(&id),
            "replay-form",
            fields,
            queued,
        )
        .await
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
        let changed = settings::change(state, &s.partner_id, input)
            .await
            .map(|changed| {
                let flash = match changed.notification_secret {
                    Some(secret) => Flash::with_secret("Saved.", secret),
                    None => Flash::said("Saved."),
                };
                flash.into()
            });
        answer(state, &s, Owner::Settings, "settings-form", fields, changed).await
    })
}
