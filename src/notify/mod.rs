//! Endpoint notices: `endpoint.failing`, `endpoint.disabled`,
//! `endpoint.recovered` and `endpoint.certificate_expiring`, and the
//! incident notices `hookd.incident.opened` and `hookd.incident.resolved`,
//! reach a partner however few endpoints it has. Each
//! is an event of the partner's (so its subscribed endpoints and its
//! notification URL, an endpoint of kind `notification`, receive it as any
//! event), and when the fanout publishes it, in the same transaction:
//! - a copy goes to the operator's partner, whose one endpoint is
//!   `notify.operator_url` (the copy names the partner);
//! - a mail is queued for the partner's `notification_email` and for
//!   `notify.operator_email`, at most one per audience per notice.
//!
//! This module holds the pure parts: which notices go where, and the mail's text.

mod incident_mail;
pub mod mail;

/// The partner that owns the operator's notification endpoint and the
/// copies of every partner's notices. Its id cannot be a partner id
/// (those are `[A-Za-z0-9_-]`), so no partner can collide with it.
pub const OPERATOR_PARTNER: &str = "hookd:operator";

/// The event types that are notices.
pub const NOTICE_TYPES: [&str; 6] = [
    "endpoint.failing",
    "endpoint.disabled",
    "endpoint.recovered",
    "endpoint.certificate_expiring",
    "hookd.incident.opened",
    "hookd.incident.resolved",
];

/// Whether an event of this type, published for this partner, is a notice
/// that fans out to the notification channels (the operator's copies are
/// not announced again).
pub fn is_notice(event_type: &str, partner_id: &str) -> bool {
    NOTICE_TYPES.contains(&event_type) && partner_id != OPERATOR_PARTNER
}

/// The mail for a notice of `event_type` with `data`, for `partner` (its
/// id and name), at `at` (RFC 3339): an incident's, or an endpoint's.
pub fn mail_text(
    event_type: &str,
    data: &serde_json::Value,
    partner: (&str, &str),
    audience: mail::Audience,
    at: &str,
) -> mail::Text {
    if event_type.starts_with("hookd.incident.") {
        incident_mail::render(event_type, data, partner, audience)
    } else {
        mail::render(event_type, data, partner, audience, at)
    }
}

/// Where notices go besides the partner's own endpoints, from configuration.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    /// Copy each notice to the operator's partner (`notify.operator_url` is set).
    pub operator_copy: bool,
    /// Mail is configured (`smtp.url`): queue mails for partners that gave an address.
    pub mail: bool,
    /// Also mail the operator here.
    pub operator_email: Option<String>,
}

impl Routes {
    pub fn from_config(config: &crate::config::Config) -> Routes {
        Routes {
            operator_copy: config.notify.operator_url.is_some(),
            mail: config.smtp.is_some(),
            operator_email: config.notify.operator_email.as_ref().map(|a| a.to_string()),
        }
    }

    /// Whether any channel beyond the partner's endpoints is configured.
    pub fn any(&self) -> bool {
        self.operator_copy || self.mail
    }
}

/// The operator's copy of a notice's data: the same, naming the partner.
pub fn operator_copy(data: &str, partner_id: &str) -> Option<String> {
    let mut value: serde_json::Value = serde_json::from_str(data).ok()?;
    value
        .as_object_mut()?
        .insert("partner_id".into(), partner_id.into());
    Some(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_three_endpoint_notices_of_a_partner_are_announced() {
        assert!(is_notice("endpoint.failing", "ptn_1"));
        assert!(is_notice("endpoint.disabled", "ptn_1"));
        assert!(is_notice("endpoint.recovered", "ptn_1"));
        assert!(!is_notice("endpoint.created", "ptn_1"));
        assert!(!is_notice("balance.updated", "ptn_1"));
        assert!(!is_notice("endpoint.failing", OPERATOR_PARTNER));
        assert!(is_notice("hookd.incident.opened", "ptn_1"));
        assert!(is_notice("hookd.incident.resolved", "ptn_1"));
    }

    #[test]
    fn the_operators_copy_names_the_partner_and_keeps_the_rest() {
        let copy = operator_copy(r#"{"endpoint_id":"ep_1","url":"https://x"}"#, "ptn_7").unwrap();
        let v: serde_json::Value = serde_json::from_str(&copy).unwrap();
        assert_eq!(v["partner_id"], "ptn_7");
        assert_eq!(v["endpoint_id"], "ep_1");
        assert_eq!(v["url"], "https://x");
        assert_eq!(operator_copy("[1]", "ptn_7"), None);
    }
}
