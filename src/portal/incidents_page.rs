//! The portal's incidents page: the times hookd's own delivery to this
//! partner was impaired, open ones first (with what hookd said), then the
//! past ones with their range and how many events were delayed. Read-only:
//! incidents are opened and resolved by hookd and its operators.

use actix_web::{HttpRequest, HttpResponse, http::StatusCode, web};
use maud::html;

use super::{
    Signed, badge,
    pages::{Nav, page},
    views::run,
};
use crate::http::{AppState, incidents::IncidentOut, problem::Problem};

/// The most incidents the page lists.
const LISTED: u32 = 100;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/portal/incidents", web::get().to(incidents));
}

async fn incidents(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, Problem> {
    let (req, state) = (&req, state.get_ref());
    run(req, state, |s| async move {
        let rows =
            crate::store::incidents::list(&state.shared.db, Some(&s.partner_id), false, LISTED)
                .await?;
        let shown: Vec<IncidentOut> = rows.into_iter().map(IncidentOut::from).collect();
        Ok(incidents_page(&shown, &s))
    })
    .await
}

/// The page: open incidents, then past ones.
pub fn incidents_page(list: &[IncidentOut], s: &Signed) -> HttpResponse {
    let (open, past): (Vec<&IncidentOut>, Vec<&IncidentOut>) =
        list.iter().partition(|i| i.state == "open");
    let body = html! {
        p.note { "Times when hookd's own delivery to you was impaired. No event is lost: delayed events are delivered when it catches up, and the event feed has every one. You are told of each by " code { "hookd.incident.opened" } " and " code { "hookd.incident.resolved" } " at your notification channel." }
        section #open-incidents {
            h3 { "Open" }
            @if open.is_empty() {
                p #no-open-incidents { "None: delivery is on time." }
            } @else {
                @for i in &open {
                    div.error role="status" data-incident=(i.id) {
                        p { b { (i.message) } }
                        p.note { "Since " (badge::time(s.now_ms, Some(&i.started_at))) " · cause " code { (i.cause) } " · " code { (i.id) } }
                    }
                }
            }
        }
        section #past-incidents {
            h3 { "Past" }
            @if past.is_empty() {
                p #no-past-incidents { "None." }
            } @else {
                div.scroll {
                    table {
                        tr { th { "Incident" } th { "Cause" } th { "Started" } th { "Resolved" } th { "Delayed events" } th { "Message" } }
                        @for i in &past {
                            tr data-incident=(i.id) {
                                td { code { (i.id) } }
                                td { (i.cause) }
                                td { (badge::time(s.now_ms, Some(&i.started_at))) }
                                td { (badge::time(s.now_ms, i.resolved_at.as_ref())) }
                                td.delayed { (i.delayed_events.unwrap_or(0)) }
                                td { (i.message) }
                            }
                        }
                    }
                }
            }
        }
    };
    page(StatusCode::OK, "Incidents", Nav::Incidents, s, body)
}
