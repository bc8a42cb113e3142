//! One answer to "how is this endpoint doing?" for every dashboard page: its
//! status as operators speak of it and its circuit, from what is stored on
//! the endpoint row and, where an actor runs for it in this instance, what
//! that actor reports. The overview, the cards, the endpoints list and the
//! endpoint page all show what [`health`] returns, so none can contradict
//! another.
//!
//! Two facts make the sources seem to disagree when they do not:
//! - an open circuit stays "open until T" in the actor and on the row after
//!   T has passed; it turns half open only when the next request asks to
//!   go. Past T the answer is half open: the next request is a probe;
//! - the owner's actor writes its circuit to the row with the record of the
//!   attempt that changed it, moments later. Where the actor runs here its
//!   view is the fresher one; the row's, when it differs, is kept to say so.

use crate::{
    delivery::report::{ActorReport, Circuit},
    domain::circuit::Saved,
    http::observe::EndpointHealth,
    store::endpoint_views::Standing,
};

/// An endpoint's status as operators speak of it: `failing` is an active
/// endpoint with a `failing_since` (as the cards and the list's filter
/// count it in SQL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Active,
    Failing,
    Paused,
    Disabled,
}

impl Status {
    /// The status stored on the row (`active`, `paused`, `disabled`) and
    /// whether every attempt has failed since some time.
    pub fn of(stored: &str, failing_since: Option<i64>) -> Status {
        match stored {
            "paused" => Status::Paused,
            "disabled" => Status::Disabled,
            _ if failing_since.is_some() => Status::Failing,
            _ => Status::Active,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Failing => "failing",
            Status::Paused => "paused",
            Status::Disabled => "disabled",
        }
    }
}

/// A circuit as one source holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub circuit: Circuit,
    /// Until when an open circuit sends nothing (it may have passed).
    pub open_until_ms: Option<i64>,
    pub consecutive_failures: u32,
}

impl Seen {
    /// The circuit saved on the endpoint row.
    pub fn stored(saved: Saved) -> Seen {
        Seen {
            circuit: match saved.open_until_ms {
                Some(_) => Circuit::Open,
                None => Circuit::Closed,
            },
            open_until_ms: saved.open_until_ms,
            consecutive_failures: saved.consecutive_failures,
        }
    }

    /// The circuit the endpoint's actor in this instance reports.
    pub fn actor(r: &ActorReport) -> Seen {
        Seen {
            circuit: r.circuit,
            open_until_ms: r.open_until_ms,
            consecutive_failures: r.consecutive_failures,
        }
    }
}

/// Where a circuit stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Requests go.
    Closed,
    /// Nothing is sent until then (still ahead).
    Open { until_ms: i64 },
    /// One probe request decides whether it closes; `since_ms`: when the
    /// open period ended, when known (then nothing has gone since and the
    /// next request is the probe).
    HalfOpen { since_ms: Option<i64> },
}

impl Phase {
    /// `seen` as it stands at `now_ms`: an open period that has passed is
    /// half open.
    pub fn at(seen: Seen, now_ms: i64) -> Phase {
        match (seen.circuit, seen.open_until_ms) {
            (Circuit::Closed, _) => Phase::Closed,
            (Circuit::Open, Some(t)) if t > now_ms => Phase::Open { until_ms: t },
            (Circuit::Open, until) => Phase::HalfOpen { since_ms: until },
            (Circuit::HalfOpen, _) => Phase::HalfOpen { since_ms: None },
        }
    }

    /// The name the pages show (and style by: `closed`, `open`, `half_open`).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Closed => "closed",
            Phase::Open { .. } => "open",
            Phase::HalfOpen { .. } => "half_open",
        }
    }

    /// Whether two sources say the same: the same phase (and for an open
    /// circuit the same end).
    fn agrees_with(self, other: Phase) -> bool {
        match (self, other) {
            (Phase::HalfOpen { .. }, Phase::HalfOpen { .. }) => true,
            (a, b) => a == b,
        }
    }
}

/// Whose view the pages show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The actor in this instance (the row trails it by moments).
    Actor,
    /// The endpoint row: no actor runs for it here.
    Stored,
}

/// What every page shows of one endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    pub status: Status,
    pub circuit: Phase,
    pub consecutive_failures: u32,
    pub source: Source,
    /// What the row says, when the actor here says otherwise: the row is
    /// written with the record of the attempt that changed the circuit.
    pub stored_differs: Option<(Phase, u32)>,
}

/// What is stored of an endpoint: its status, `failing_since` and circuit.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    pub status: &'a str,
    pub failing_since: Option<i64>,
    pub circuit: Seen,
}

/// The one status and circuit every page shows of an endpoint at `now_ms`,
/// from what is `stored` and what its `actor` here reports (if one runs).
pub fn health(stored: Stored, actor: Option<Seen>, now_ms: i64) -> Health {
    let status = Status::of(stored.status, stored.failing_since);
    let row = (
        Phase::at(stored.circuit, now_ms),
        stored.circuit.consecutive_failures,
    );
    let Some(actor) = actor else {
        return Health {
            status,
            circuit: row.0,
            consecutive_failures: row.1,
            source: Source::Stored,
            stored_differs: None,
        };
    };
    let live = Phase::at(actor, now_ms);
    let agrees = live.agrees_with(row.0) && actor.consecutive_failures == row.1;
    Health {
        status,
        circuit: live,
        consecutive_failures: actor.consecutive_failures,
        source: Source::Actor,
        stored_differs: (!agrees).then_some(row),
    }
}

/// [`health`] of an endpoint as the endpoints list and its page read it,
/// beside its actor's report here (if one runs).
pub fn of_standing(e: &Standing, actor: Option<&ActorReport>, now_ms: i64) -> Health {
    let stored = Stored {
        status: &e.status,
        failing_since: e.failing_since,
        circuit: Seen::stored(e.circuit),
    };
    health(stored, actor.map(Seen::actor), now_ms)
}

/// [`health`] of an endpoint as the overview reads it (the operator API's
/// view of endpoints and their actors).
pub fn of_overview(e: &EndpointHealth, now_ms: i64) -> Health {
    let stored = Stored {
        status: &e.status,
        failing_since: e.failing_since_ms,
        circuit: Seen::stored(Saved {
            consecutive_failures: e.consecutive_failures,
            open_until_ms: e.saved_open_until_ms,
            cooldown_ms: None,
        }),
    };
    let actor = e.actor.as_ref().map(|a| Seen::actor(&a.report));
    health(stored, actor, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_676_800_000;

    fn row(open_until_ms: Option<i64>, failures: u32) -> Seen {
        Seen::stored(Saved {
            consecutive_failures: failures,
            open_until_ms,
            cooldown_ms: None,
        })
    }

    fn actor(circuit: Circuit, open_until_ms: Option<i64>, failures: u32) -> Seen {
        Seen {
            circuit,
            open_until_ms,
            consecutive_failures: failures,
        }
    }

    fn stored(status: &str, failing_since: Option<i64>, circuit: Seen) -> Stored<'_> {
        Stored {
            status,
            failing_since,
            circuit,
        }
    }

    #[test]
    fn an_active_endpoint_with_a_failing_since_is_failing_and_a_stopped_one_is_what_it_is() {
        assert_eq!(Status::of("active", Some(NOW)), Status::Failing);
        assert_eq!(Status::of("active", None), Status::Active);
        assert_eq!(Status::of("paused", Some(NOW)), Status::Paused);
        assert_eq!(Status::of("disabled", Some(NOW)), Status::Disabled);
    }

    #[test]
    fn the_status_names_are_the_ones_the_list_filters_by() {
        use crate::store::endpoint_views::{Choice, StatusFilter};
        let named: Vec<&str> = StatusFilter::all().map(|s| s.as_str()).collect();
        let ours: Vec<&str> = [
            Status::Active,
            Status::Failing,
            Status::Paused,
            Status::Disabled,
        ]
        .map(Status::as_str)
        .to_vec();
        assert_eq!(named, ours);
    }

    #[test]
    fn a_failing_endpoint_with_an_open_circuit_reads_the_same_from_the_row_and_its_actor() {
        let until = NOW + 30_000;
        let s = stored("active", Some(NOW - 60_000), row(Some(until), 9));
        let from_row = health(s, None, NOW);
        let from_actor = health(s, Some(actor(Circuit::Open, Some(until), 9)), NOW);
        for h in [from_row, from_actor] {
            assert_eq!(h.status, Status::Failing, "{h:?}");
            assert_eq!(h.circuit, Phase::Open { until_ms: until }, "{h:?}");
            assert_eq!(h.consecutive_failures, 9);
            assert_eq!(h.stored_differs, None, "nothing to explain: {h:?}");
        }
        assert_eq!(from_row.source, Source::Stored);
        assert_eq!(from_actor.source, Source::Actor);
    }

    #[test]
    fn an_open_period_that_has_passed_is_half_open_whichever_source_still_says_open() {
        let lapsed = NOW - 14_000;
        let s = stored("active", Some(NOW - 60_000), row(Some(lapsed), 3));
        let h = health(s, Some(actor(Circuit::Open, Some(lapsed), 3)), NOW);
        assert_eq!(
            h.circuit,
            Phase::HalfOpen {
                since_ms: Some(lapsed)
            },
            "the next request is a probe"
        );
        assert_eq!(
            h.stored_differs, None,
            "the row's half open and the actor's lapsed open are one answer"
        );
        assert_eq!(
            health(s, None, NOW).circuit,
            Phase::HalfOpen {
                since_ms: Some(lapsed)
            }
        );
    }

    #[test]
    fn a_probe_under_way_agrees_with_a_row_saved_half_open() {
        let s = stored("active", Some(NOW - 60_000), row(Some(NOW - 5), 4));
        let h = health(s, Some(actor(Circuit::HalfOpen, None, 4)), NOW);
        assert_eq!(h.circuit, Phase::HalfOpen { since_ms: None });
        assert_eq!(h.stored_differs, None);
    }

    #[test]
    fn the_actor_here_wins_and_a_row_that_trails_it_is_kept_to_be_explained() {
        let until = NOW + 30_000;
        let s = stored("active", Some(NOW - 60_000), row(Some(until), 5));
        let closed = health(s, Some(actor(Circuit::Closed, None, 0)), NOW);
        assert_eq!(closed.circuit, Phase::Closed, "a probe just succeeded");
        assert_eq!(closed.consecutive_failures, 0);
        assert_eq!(
            closed.stored_differs,
            Some((Phase::Open { until_ms: until }, 5))
        );
        let more = health(s, Some(actor(Circuit::Open, Some(until), 6)), NOW);
        assert_eq!(
            more.stored_differs,
            Some((Phase::Open { until_ms: until }, 5)),
            "a failure not yet written"
        );
    }

    #[test]
    fn a_closed_circuit_with_nothing_failing_is_active_and_closed() {
        let s = stored("active", None, row(None, 0));
        let h = health(s, None, NOW);
        assert_eq!(
            (h.status, h.circuit, h.consecutive_failures),
            (Status::Active, Phase::Closed, 0)
        );
        assert_eq!(h.circuit.name(), "closed");
    }
}
