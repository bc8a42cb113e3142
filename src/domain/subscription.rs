//! Whether an endpoint takes an event: at fanout, to create its delivery, and
//! again before every attempt, since the endpoint may have changed since
//! (a PATCH of its event types). Pure.

/// Whether `patterns` (an endpoint's event types) take `event_type`: no
/// patterns take everything; `usage.*` takes `usage.finalized` (a wildcard
/// stops at a dot); anything else matches exactly.
pub fn subscribes(patterns: &[String], event_type: &str) -> bool {
    patterns.is_empty()
        || patterns.iter().any(|p| match p.strip_suffix(".*") {
            Some(prefix) => event_type
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('.')),
            None => p == event_type,
        })
}

/// Why a delivery no longer qualifies for its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unqualified {
    /// The endpoint belongs to another partner than the event.
    OtherPartner,
    /// The endpoint no longer subscribes to the event's type.
    Unsubscribed,
}

impl Unqualified {
    /// Every reason, for whatever lists them all (the metrics' series).
    pub const ALL: [Unqualified; 2] = [Unqualified::OtherPartner, Unqualified::Unsubscribed];

    /// The reason stored on the cancelled delivery and shown to the partner.
    pub fn reason(self) -> &'static str {
        match self {
            Unqualified::OtherPartner => "endpoint-of-another-partner",
            Unqualified::Unsubscribed => "endpoint-unsubscribed",
        }
    }
}

/// Whether an event of `event_partner` and `event_type` may still go to an
/// endpoint of `endpoint_partner` subscribed to `patterns`.
pub fn qualifies(
    endpoint_partner: &str,
    patterns: &[String],
    event_partner: &str,
    event_type: &str,
) -> Result<(), Unqualified> {
    if endpoint_partner != event_partner {
        return Err(Unqualified::OtherPartner);
    }
    // A test event is sent to the one endpoint it was asked for, whatever
    // types that endpoint takes.
    if event_type != "webhook.test" && !subscribes(patterns, event_type) {
        return Err(Unqualified::Unsubscribed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_endpoint_without_types_subscribes_to_everything() {
        assert!(subscribes(&[], "usage.finalized"));
    }

    #[test]
    fn types_match_exactly_or_by_a_trailing_wildcard() {
        let p = types(&["usage.*", "balance.updated"]);
        assert!(subscribes(&p, "usage.finalized"));
        assert!(subscribes(&p, "balance.updated"));
        assert!(!subscribes(&p, "balance.created"));
        assert!(
            !subscribes(&p, "usage_x.finalized"),
            "a wildcard stops at a dot"
        );
    }

    #[test]
    fn a_delivery_qualifies_only_for_its_own_partner_and_a_type_still_subscribed() {
        let p = types(&["a.b"]);
        assert_eq!(qualifies("p1", &p, "p1", "a.b"), Ok(()));
        assert_eq!(
            qualifies("p1", &p, "p1", "c.d"),
            Err(Unqualified::Unsubscribed)
        );
        assert_eq!(
            qualifies("p2", &p, "p1", "a.b"),
            Err(Unqualified::OtherPartner)
        );
    }
}
