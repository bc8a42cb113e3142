//! The text of an incident notice mail (`hookd.incident.opened`,
//! `hookd.incident.resolved`): what happened, since when, until when and
//! how many events waited, and that nothing is lost.

use serde_json::Value;

use super::mail::{Audience, Text, one_line};

/// The mail for an incident notice with `data`, for `partner` (id, name).
pub(super) fn render(
    event_type: &str,
    data: &Value,
    partner: (&str, &str),
    audience: Audience,
) -> Text {
    let field = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or("unknown");
    let (partner_id, partner_name) = partner;
    let resolved = event_type == "hookd.incident.resolved";
    let headline = if resolved {
        "Delivery caught up"
    } else {
        "Delivery is delayed"
    };
    let subject = match audience {
        Audience::Partner => format!("[hookd] {headline}: {}", field("message")),
        Audience::Operator => format!("[hookd] {partner_name} ({partner_id}): {headline}"),
    };
    let mut body = format!(
        "{headline}.\n\n{}\n\nIncident:       {}\nCause:          {}\nPartner:        {partner_name} ({partner_id})\nStarted:        {}\n",
        field("message"),
        field("incident_id"),
        field("cause"),
        field("started_at"),
    );
    if resolved {
        let delayed = data
            .get("delayed_events")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        body.push_str(&format!(
            "Resolved:       {}\nDelayed events: {delayed}\n\nWhat to do: nothing; the delayed events have been delivered or are on their \
             way. To reconcile, read the event feed (GET /v1/events) for the time range.\n",
            field("resolved_at")
        ));
    } else {
        body.push_str(
            "\nWhat to do: nothing; no event is lost. Events are delivered when delivery \
             catches up, and you are told then (hookd.incident.resolved). Meanwhile the \
             event feed (GET /v1/events) has every event.\n",
        );
    }
    if audience == Audience::Operator {
        body.push_str("\nYou receive this as the operator of hookd (notify.operator_email).\n");
    } else {
        body.push_str(
            "\nYou receive this because this address is the partner's notification_email \
             (change it with PATCH /v1/partner).\n",
        );
    }
    Text {
        subject: one_line(&subject),
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_resolved_incident_mail_gives_the_range_and_the_delayed_count() {
        let data = json!({"incident_id": "inc_1", "cause": "backlog", "message": "late",
            "started_at": "2026-10-15T14:00:00Z", "resolved_at": "2026-10-15T15:00:00Z",
            "delayed_events": 12});
        let text = render(
            "hookd.incident.resolved",
            &data,
            ("ptn_1", "Acme"),
            Audience::Partner,
        );
        assert!(text.subject.contains("caught up"), "{}", text.subject);
        assert!(text.body.contains("Delayed events: 12"), "{}", text.body);
        assert!(text.body.contains("2026-10-15T15:00:00Z"), "{}", text.body);
    }

    #[test]
    fn an_opened_incident_mail_to_the_operator_names_the_partner() {
        let data = json!({"incident_id": "inc_1", "cause": "manual", "message": "a\nb",
            "started_at": "2026-10-15T14:00:00Z"});
        let text = render(
            "hookd.incident.opened",
            &data,
            ("ptn_1", "Acme"),
            Audience::Operator,
        );
        assert!(text.subject.contains("Acme (ptn_1)"), "{}", text.subject);
        assert!(text.body.contains("inc_1"), "{}", text.body);
    }
}
