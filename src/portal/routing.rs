//! The portal's forms for an endpoint's routing: save its filter (empty
//! removes it), try the filter in the box on a sample event or one of the
//! partner's events without saving it, and replay or skip the head of a
//! held subject. Each goes through the Partner API's operation
//! (`endpoint_ops::update`, `filters::try_filter`, `queue_replay`,
//! `ordering::skip`). A change redirects to the endpoint page (`answer`);
//! a test changes nothing and answers with the page and its result.

use actix_web::{HttpRequest, HttpResponse, web};

use super::{
    actions::genuine,
    answer::{Owner, answer},
    cross_site,
    flash::Flash,
    form::{self, Draft},
    views::{run, show_endpoint},
};
use crate::http::{
    AppState,
    partner::{
        deliveries::queue_replay,
        endpoint_ops as ops,
        endpoint_shapes::UpdateEndpoint,
        filters::{Trying, try_filter},
        ordering::skip,
    },
    problem::Problem,
};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route(
        "/portal/endpoints/{id}/filter/{action}",
        web::post().to(filter),
    )
    .route(
        "/portal/endpoints/{id}/held/{delivery}/{action}",
        web::post().to(held),
    );
}

/// `save` stores the filter in the box; `test` tries it on the sample.
async fn filter(
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, action) = path.into_inner();
    genuine!(req, payload, state, |s, fields| {
        let partner = s.partner_id.as_str();
        match action.as_str() {
            "save" => {
                let saved = async {
                    ops::changeable(state, partner, &id).await?;
                    let given = form::json(&fields, "filter")?;
                    let said = match given {
                        Some(_) => "Filter saved.",
                        None => {
                            "Filter removed: every event of the endpoint's types gets a delivery."
                        }
                    };
                    let input = UpdateEndpoint {
                        filter: Some(given),
                        ..UpdateEndpoint::default()
                    };
                    ops::update(state, partner, &id, input).await?;
                    Ok(Flash::said(said).into())
                }
                .await;
                answer(
                    state,
                    &s,
                    Owner::Endpoint(&id),
                    "filter-form",
                    fields,
                    saved,
                )
                .await
            }
            "test" => {
                let tried = async {
                    // The filter in the box, not the saved one (none if empty).
                    let trying = Trying::Draft(form::json(&fields, "filter")?);
                    let event = form::json(&fields, "event")?;
                    let event_id = form::text(&fields, "event_id").map(str::to_string);
                    let shared = &state.shared;
                    let on = (&shared.db, &*shared.catalog);
                    try_filter(on, (partner, &id), event, event_id, trying).await
                }
                .await;
                let draft = match tried {
                    Ok(tested) => Draft {
                        fields,
                        tested: Some(tested),
                        ..Draft::default()
                    },
                    // An event id that is not one of the partner's is a 404.
                    Err(p) if p.status == 422 || p.status == 404 => {
                        Draft::refused(fields, &p, "filter-form")
                    }
                    Err(p) => return Err(p),
                };
                show_endpoint(state, &s, &id, &draft, None).await
            }
            _ => Err(Problem::not_found("no such action")),
        }
    })
}

/// `replay` sends a held subject's head again now; `skip` lets a dead head
/// go, so the subject's next delivery is sent.
async fn held(
    req: HttpRequest,
    path: web::Path<(String, String, String)>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, Problem> {
    let (id, delivery, action) = path.into_inner();
    genuine!(req, payload, state, |s, fields| {
        let partner = s.partner_id.as_str();
        let said = match action.as_str() {
            "replay" => queue_replay(state, partner, &delivery)
                .await
                .map(|q| match q.waiting_for {
                    None => format!("Delivery {delivery} is being sent again now."),
                    Some(why) => format!("Delivery {delivery} is queued: {why}."),
                }),
            "skip" => skip(state, partner, &delivery).await.map(|skipped| {
                format!(
                    "Delivery {} skipped: the subject's next delivery goes now; the skipped one stays dead.",
                    skipped.id
                )
            }),
            _ => return Err(Problem::not_found("no such action")),
        };
        let done = said.map(|said| Flash::said(said).into());
        answer(state, &s, Owner::Endpoint(&id), "held-form", fields, done).await
    })
}
