//! Incidents: when hookd's own delivery to a partner is impaired. The pure
//! rules: what an incident is, when an observation opens, keeps or resolves
//! one, how an instance remembers a database outage it lived through, and
//! what the partner's notices say. The sweep (`delivery::incident_sweep`)
//! reads the observations and writes what these decide.

use serde_json::{Value, json};

use super::event::format_time;

/// What impaired delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A partner's due deliveries waited longer than `incidents.backlog_age`.
    Backlog,
    /// The database was unreachable longer than `incidents.database_down`.
    Database,
    /// No instance that delivers was alive for `incidents.instances_down`
    /// (every one stopped, or only API-only ones running).
    Instances,
    /// Opened by an operator, with a message.
    Manual,
}

impl Cause {
    pub const ALL: [Cause; 4] = [
        Cause::Backlog,
        Cause::Database,
        Cause::Instances,
        Cause::Manual,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Backlog => "backlog",
            Cause::Database => "database",
            Cause::Instances => "instances",
            Cause::Manual => "manual",
        }
    }

    pub fn parse(text: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// Who opened an incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenedBy {
    /// hookd's own sweep.
    Detector,
    /// An operator, through the admin API, the CLI or the dashboard.
    Operator,
}

impl OpenedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            OpenedBy::Detector => "detector",
            OpenedBy::Operator => "operator",
        }
    }
}

/// One incident as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incident {
    pub id: String,
    pub partner_id: String,
    pub cause: String,
    pub message: String,
    pub started_at: i64,
    pub resolved_at: Option<i64>,
    /// Counted when it resolved.
    pub delayed_events: Option<i64>,
    pub opened_by: String,
    /// When it was opened (for a database incident: when the database was back).
    pub opened_at: i64,
}

impl Incident {
    pub fn is_open(&self) -> bool {
        self.resolved_at.is_none()
    }

    /// The data of its `hookd.incident.opened` notice, or of its
    /// `hookd.incident.resolved` once resolved.
    pub fn notice(&self) -> (&'static str, Value) {
        let mut data = json!({
            "incident_id": self.id,
            "cause": self.cause,
            "message": self.message,
            "started_at": format_time(self.started_at),
        });
        match self.resolved_at {
            None => ("hookd.incident.opened", data),
            Some(at) => {
                data["resolved_at"] = format_time(at).into();
                data["delayed_events"] = self.delayed_events.unwrap_or(0).into();
                ("hookd.incident.resolved", data)
            }
        }
    }
}

/// The message of a backlog incident.
pub fn backlog_message(backlog_age: std::time::Duration) -> String {
    let secs = backlog_age.as_secs();
    let age = match secs {
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    };
    format!(
        "Deliveries to your endpoints are overdue by more than {age}: hookd is behind. No event is lost."
    )
}

/// The message of a database incident that began at `since`.
pub fn database_message(since: i64) -> String {
    format!(
        "hookd could not reach its database from {}: deliveries waited. No event is lost.",
        format_time(since)
    )
}

/// The message of an incident of no delivering instance since `since`.
pub fn instances_message(since: i64) -> String {
    format!(
        "No hookd instance was delivering from {}: deliveries waited. No event is lost.",
        format_time(since)
    )
}

/// Since when delivery has been silent, if for `threshold_ms` or longer
/// at `now_ms`: `pulse` is the last moment an instance that delivers was
/// alive.
pub fn silent_since(pulse: Option<i64>, now_ms: i64, threshold_ms: i64) -> Option<i64> {
    pulse.filter(|at| now_ms - at >= threshold_ms)
}

/// Why an operator's message is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    #[error("must say what happened: 1 to 1000 characters, not only spaces")]
    Length,
}

/// An operator's message for an incident, trimmed: 1 to 1000 characters.
pub fn message(text: &str) -> Result<String, MessageError> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > 1000 {
        return Err(MessageError::Length);
    }
    Ok(text.to_string())
}

/// What an observation calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Open an incident that started at this time (Unix ms).
    Open { started_at: i64 },
    /// The open incident goes on.
    Keep,
    /// Delivery caught up: resolve the open incident.
    Resolve,
    /// Nothing is open and nothing should be.
    Nothing,
}

/// Whether a partner whose oldest overdue delivery was due at `oldest_due`
/// (none: nothing overdue) has caught up: nothing overdue by more than a
/// quarter of the threshold. The quarter keeps an incident from opening
/// and resolving in turn while the backlog hovers about the threshold.
pub fn caught_up(oldest_due: Option<i64>, now_ms: i64, backlog_age_ms: i64) -> bool {
    oldest_due.is_none_or(|due| now_ms - due <= backlog_age_ms / 4)
}

/// Whether a partner whose oldest delivery waiting on hookd was due at
/// `oldest_due` has caught up after a database outage reported at
/// `opened_at`: nothing due before the database was back still waits.
pub fn caught_up_since(oldest_due: Option<i64>, opened_at: i64) -> bool {
    oldest_due.is_none_or(|due| due >= opened_at)
}

/// The backlog rule for one partner: open when its oldest overdue delivery
/// has waited `backlog_age_ms`, from when that delivery was due or, if
/// later, from when its last backlog incident was resolved (`ended`: a
/// backlog counts from the end of the one before, never twice); resolve
/// the open one when it has caught up.
pub fn backlog(
    oldest_due: Option<i64>,
    open: bool,
    ended: Option<i64>,
    now_ms: i64,
    backlog_age_ms: i64,
) -> Decision {
    let since = oldest_due.map(|due| ended.map_or(due, |ended| due.max(ended)));
    match (open, since) {
        (false, Some(since)) if now_ms - since >= backlog_age_ms => {
            Decision::Open { started_at: since }
        }
        (false, _) => Decision::Nothing,
        (true, _) if caught_up(oldest_due, now_ms, backlog_age_ms) => Decision::Resolve,
        (true, _) => Decision::Keep,
    }
}

/// An outage of the database as one instance lived through it: an instance
/// cannot write while the database is down, so it remembers when the
/// outage began and reports it once the database answers again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outage {
    since: Option<i64>,
}

impl Outage {
    /// The database did not answer at `now_ms`.
    pub fn failed(&mut self, now_ms: i64) {
        self.since.get_or_insert(now_ms);
    }

    /// Since when the database has not answered, if it does not.
    pub fn since(&self) -> Option<i64> {
        self.since
    }

    /// The database answered at `now_ms`: the outage (start, end) if it
    /// lasted `threshold_ms` or longer. Either way it is over.
    pub fn answered(&mut self, now_ms: i64, threshold_ms: i64) -> Option<(i64, i64)> {
        let since = self.since.take()?;
        (now_ms - since >= threshold_ms).then_some((since, now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    #[test]
    fn delivery_is_silent_only_once_the_pulse_is_as_old_as_the_threshold() {
        assert_eq!(silent_since(Some(0), 4 * MIN, 5 * MIN), None);
        assert_eq!(silent_since(Some(MIN), 6 * MIN, 5 * MIN), Some(MIN));
        assert_eq!(
            silent_since(None, 99 * MIN, 5 * MIN),
            None,
            "a new database"
        );
    }

    #[test]
    fn a_backlog_younger_than_the_threshold_opens_nothing() {
        assert_eq!(
            backlog(Some(0), false, None, 14 * MIN, 15 * MIN),
            Decision::Nothing
        );
        assert_eq!(
            backlog(None, false, None, 14 * MIN, 15 * MIN),
            Decision::Nothing
        );
    }

    #[test]
    fn a_backlog_as_old_as_the_threshold_opens_from_when_its_oldest_was_due() {
        assert_eq!(
            backlog(Some(3 * MIN), false, None, 18 * MIN, 15 * MIN),
            Decision::Open {
                started_at: 3 * MIN
            }
        );
    }

    #[test]
    fn a_backlog_counts_from_the_end_of_the_last_one_never_twice() {
        assert_eq!(
            backlog(Some(3 * MIN), false, Some(10 * MIN), 18 * MIN, 15 * MIN),
            Decision::Nothing,
            "the delivery due at 3 was the last incident's, which ended at 10"
        );
        assert_eq!(
            backlog(Some(3 * MIN), false, Some(10 * MIN), 25 * MIN, 15 * MIN),
            Decision::Open {
                started_at: 10 * MIN
            }
        );
        assert_eq!(
            backlog(Some(12 * MIN), false, Some(10 * MIN), 27 * MIN, 15 * MIN),
            Decision::Open {
                started_at: 12 * MIN
            }
        );
    }

    #[test]
    fn an_open_backlog_incident_resolves_only_when_delivery_caught_up() {
        assert_eq!(
            backlog(Some(0), true, None, 10 * MIN, 15 * MIN),
            Decision::Keep
        );
        assert_eq!(
            backlog(Some(0), true, None, 3 * MIN, 15 * MIN),
            Decision::Resolve
        );
        assert_eq!(
            backlog(None, true, None, 99 * MIN, 15 * MIN),
            Decision::Resolve
        );
    }

    #[test]
    fn a_short_database_outage_is_forgotten_and_a_long_one_reported_with_its_start() {
        let mut outage = Outage::default();
        outage.failed(10 * MIN);
        outage.failed(11 * MIN);
        assert_eq!(outage.since(), Some(10 * MIN));
        assert_eq!(outage.answered(11 * MIN, 2 * MIN), None);
        assert_eq!(
            outage.since(),
            None,
            "a short outage is over when it answers"
        );
        outage.failed(20 * MIN);
        outage.failed(21 * MIN);
        assert_eq!(
            outage.answered(23 * MIN, 2 * MIN),
            Some((20 * MIN, 23 * MIN))
        );
        assert_eq!(outage.answered(24 * MIN, 2 * MIN), None, "reported once");
    }

    #[test]
    fn after_an_outage_a_partner_caught_up_once_nothing_due_before_it_was_back_waits() {
        assert!(!caught_up_since(Some(5 * MIN), 6 * MIN));
        assert!(caught_up_since(Some(6 * MIN), 6 * MIN));
        assert!(caught_up_since(None, 6 * MIN));
    }

    #[test]
    fn the_notices_say_opened_then_resolved_with_the_range_and_count() {
        let mut i = Incident {
            id: "inc_1".into(),
            partner_id: "ptn_1".into(),
            cause: "backlog".into(),
            message: "late".into(),
            started_at: 0,
            resolved_at: None,
            delayed_events: None,
            opened_by: "detector".into(),
            opened_at: 0,
        };
        let (t, data) = i.notice();
        assert_eq!(t, "hookd.incident.opened");
        assert_eq!(data["started_at"], "1970-01-01T00:00:00Z");
        assert!(data.get("resolved_at").is_none());
        i.resolved_at = Some(MIN);
        i.delayed_events = Some(4);
        let (t, data) = i.notice();
        assert_eq!(t, "hookd.incident.resolved");
        assert_eq!(data["resolved_at"], "1970-01-01T00:01:00Z");
        assert_eq!(data["delayed_events"], 4);
    }
}
