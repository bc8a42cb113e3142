//! The text of a notice mail: plain, short, and enough to act on without
//! signing in: which endpoint, since when, the last error, what to do.

use serde_json::Value;

/// Who a mail is for: the partner's people, or the operator on call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Partner,
    Operator,
}

impl Audience {
    pub fn as_str(self) -> &'static str {
        match self {
            Audience::Partner => "partner",
            Audience::Operator => "operator",
        }
    }
}

/// A mail's subject and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub subject: String,
    pub body: String,
}

/// The mail for a notice of `event_type` with `data` (the event's data),
/// about an endpoint of `partner` (its id and name), at `at` (RFC 3339).
pub fn render(
    event_type: &str,
    data: &Value,
    partner: (&str, &str),
    audience: Audience,
    at: &str,
) -> Text {
    let field = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or("unknown");
    let endpoint = field("endpoint_id");
    let url = field("url");
    let (headline, todo) = match event_type {
        "endpoint.failing" => (
            "is failing",
            "Check that the receiver is up and answers 2xx within the timeout. Deliveries are \
             retried on their schedule; if it keeps failing, the endpoint is disabled.",
        ),
        "endpoint.disabled" => (
            "was disabled",
            "Nothing is sent to it now; its deliveries are paused. Fix the receiver, enable the \
             endpoint (POST /v1/endpoints/{id}/enable) and paused deliveries resume; recover \
             older ones with POST /v1/endpoints/{id}/recover.",
        ),
        "endpoint.certificate_expiring" => (
            "presents a client certificate that expires soon",
            "Upload a new certificate and key (PUT /v1/endpoints/{id}/auth/client-certificate, \
             or the portal) before it expires; after that the receiver refuses the TLS \
             handshake and deliveries fail as `tls`.",
        ),
        "endpoint.recovered" => (
            "recovered",
            "It answers 2xx again. Nothing to do; retries already scheduled go out as planned.",
        ),
        _ => ("changed", "See the endpoint in the API or the portal."),
    };
    let (partner_id, partner_name) = partner;
    let subject = match audience {
        Audience::Partner => format!("[hookd] Endpoint {endpoint} {headline}"),
        Audience::Operator => {
            format!("[hookd] {partner_name} ({partner_id}): endpoint {endpoint} {headline}")
        }
    };
    let mut body = format!(
        "Endpoint {endpoint} {headline}.\n\nEndpoint:       {endpoint}\nURL:            {url}\nPartner:        {partner_name} ({partner_id})\nAt:             {at}\n"
    );
    if let Some(subject) = data.get("subject").and_then(Value::as_str) {
        body.push_str(&format!("Certificate:    {subject}\n"));
    }
    if let Some(expires) = data.get("expires_at").and_then(Value::as_str) {
        body.push_str(&format!("Expires:        {expires}\n"));
    }
    if let Some(since) = data.get("failing_since").and_then(Value::as_str) {
        body.push_str(&format!("Failing since:  {since}\n"));
    }
    if let Some(reason) = data.get("reason").and_then(Value::as_str) {
        body.push_str(&format!("Reason:         {reason}\n"));
    }
    if let Some(err) = data.get("last_error").filter(|e| e.is_object()) {
        let category = err
            .get("category")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        let status = err
            .get("status_code")
            .and_then(Value::as_i64)
            .map(|s| format!(" (HTTP {s})"))
            .unwrap_or_default();
        body.push_str(&format!("Last error:     {category}{status}\n"));
        if let Some(excerpt) = err
            .get("excerpt")
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty())
        {
            body.push_str("Answer excerpt (redacted):\n");
            for line in excerpt.lines().take(10) {
                body.push_str(&format!("  > {line}\n"));
            }
        }
    }
    body.push_str(&format!(
        "\nWhat to do: {}\n",
        todo.replace("{id}", endpoint)
    ));
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

/// A name with a line break must not become a header of its own.
pub(super) fn one_line(subject: &str) -> String {
    subject
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Tries a mail gets before it is dead.
pub const MAIL_TRIES: u32 = 10;

/// How long to wait after the `attempts`-th failed try: 30 s, doubling, at
/// most an hour; `None` once the tries are used up (about 6 hours in all).
pub fn retry_delay_ms(attempts: u32) -> Option<i64> {
    if attempts >= MAIL_TRIES {
        return None;
    }
    let doublings = attempts.saturating_sub(1).min(20);
    Some((30_000i64 << doublings).min(3_600_000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failing() -> Value {
        json!({"endpoint_id": "ep_1", "url": "https://hooks.example/in",
               "failing_since": "2026-12-02T08:00:00.000Z",
               "last_error": {"category": "http_status", "status_code": 503,
                              "excerpt": "upstream down\nretry later", "at": "2026-12-02T09:00:00.000Z"}})
    }

    #[test]
    fn a_failing_mail_names_the_endpoint_since_when_the_last_error_and_what_to_do() {
        let t = render(
            "endpoint.failing",
            &failing(),
            ("ptn_1", "Acme"),
            Audience::Partner,
            "2026-12-02T09:00:01.000Z",
        );
        assert_eq!(t.subject, "[hookd] Endpoint ep_1 is failing");
        for part in [
            "URL:            https://hooks.example/in",
            "Failing since:  2026-12-02T08:00:00.000Z",
            "Last error:     http_status (HTTP 503)",
            "  > upstream down\n  > retry later\n",
            "What to do: Check that the receiver",
        ] {
            assert!(t.body.contains(part), "missing {part:?} in\n{}", t.body);
        }
    }

    #[test]
    fn a_disabled_mail_says_how_to_enable_and_recover_that_endpoint() {
        let data = json!({"endpoint_id": "ep_9", "url": "https://x", "reason": "the receiver answered 410 Gone", "last_error": null});
        let t = render(
            "endpoint.disabled",
            &data,
            ("ptn_1", "Acme"),
            Audience::Partner,
            "t",
        );
        assert!(
            t.body
                .contains("Reason:         the receiver answered 410 Gone")
        );
        assert!(t.body.contains("POST /v1/endpoints/ep_9/enable"));
        assert!(!t.body.contains("Last error"));
    }

    #[test]
    fn the_operators_mail_names_the_partner_in_its_subject() {
        let t = render(
            "endpoint.recovered",
            &json!({"endpoint_id": "ep_1", "url": "u"}),
            ("ptn_1", "Acme"),
            Audience::Operator,
            "t",
        );
        assert_eq!(t.subject, "[hookd] Acme (ptn_1): endpoint ep_1 recovered");
        assert!(t.body.contains("notify.operator_email"));
    }

    #[test]
    fn a_failed_mail_waits_longer_each_time_up_to_an_hour_then_is_given_up() {
        assert_eq!(retry_delay_ms(1), Some(30_000));
        assert_eq!(retry_delay_ms(2), Some(60_000));
        assert_eq!(retry_delay_ms(7), Some(1_920_000));
        assert_eq!(retry_delay_ms(8), Some(3_600_000));
        assert_eq!(retry_delay_ms(9), Some(3_600_000));
        assert_eq!(retry_delay_ms(MAIL_TRIES), None);
    }

    #[test]
    fn a_line_break_in_a_partner_name_stays_inside_the_subject() {
        let t = render(
            "endpoint.recovered",
            &json!({}),
            ("ptn_1", "Acme\r\nBcc: x@y"),
            Audience::Operator,
            "t",
        );
        assert!(
            !t.subject.contains('\n') && !t.subject.contains('\r'),
            "{}",
            t.subject
        );
    }
}
