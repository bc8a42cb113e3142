//! The overview's open incidents: which partners are being told that
//! hookd's own delivery to them is impaired, since when and why. Opened and
//! resolved by the sweep, or by hand (`hookd incident`, the admin API).

use maud::{Markup, html};

use crate::http::incidents::IncidentOut;

/// The open incidents as an alert above the cards; nothing when none is open.
pub fn open_incidents(list: &[IncidentOut], now_ms: i64) -> Markup {
    html! {
        @if !list.is_empty() {
            section #incidents role="alert" {
                h2 { "Open incidents (" (list.len()) ")" }
                p.note { "Each partner below was told (hookd.incident.opened) and is told again when it resolves. Resolve one by hand with " code { "hookd incident resolve <id>" } "." }
                table {
                    tr { th { "Incident" } th { "Partner" } th { "Cause" } th { "Since" } th { "Message" } }
                    @for i in list {
                        tr data-incident=(i.id) {
                            td { code { (i.id) } }
                            td { a href={ "/dashboard?partner_id=" (i.partner_id) } { code { (i.partner_id) } } }
                            td { (i.cause) }
                            td { (crate::web::when::when_text(now_ms, &i.started_at)) }
                            td { (i.message) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_open_incident_shows_nothing_and_one_shows_escaped() {
        assert_eq!(open_incidents(&[], 0).into_string(), "");
        let i = IncidentOut {
            id: "inc_1".into(),
            partner_id: "ptn_1".into(),
            cause: "manual".into(),
            message: "<b>late</b>".into(),
            state: "open".into(),
            started_at: "2026-10-15T14:00:00Z".into(),
            resolved_at: None,
            delayed_events: None,
            opened_by: "operator".into(),
        };
        let page = open_incidents(&[i], 0).into_string();
        assert!(page.contains("inc_1"), "{page}");
        assert!(page.contains("&lt;b&gt;late"), "{page}");
    }
}
