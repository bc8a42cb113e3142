//! What publishing writes, decided before anything is written: which
//! subscribed endpoint gets a delivery of which event (types, filters,
//! renditions, ordering keys), which of them go out already claimed, and
//! each new row's state; and what publishing reports. Pure: the statements
//! that write it are in `fanout` (one transaction, every case) and
//! `publish_at_once` (one statement, the common case on PostgreSQL).

use std::collections::{BTreeMap, HashMap};

use super::{claims::Claimed, subscribers::Subscriber};
use crate::{
    catalog::{
        Catalog,
        render::{NO_RENDERING, Rendering, choose},
    },
    domain::{
        filter::{EventView, FilterReason, Verdict},
        ids::new_id,
        ordering::{Place, subject_key},
        renditions::Renditions,
        subscription::subscribes,
    },
};

/// What one claim did.
#[derive(Debug, Default, Clone)]
pub struct Fanout {
    pub events: usize,
    /// Events rejected: they fail the catalog (written around the API).
    pub rejected: usize,
    /// Endpoint id → deliveries created for it, due now (or claimed).
    pub deliveries: BTreeMap<String, usize>,
    /// Deliveries created waiting behind an earlier one of their subject.
    pub waiting: usize,
    /// The events published, when the claim was traced.
    pub published: Vec<PublishedEvent>,
    /// Deliveries not created because the event did not pass the
    /// endpoint's filter, by reason.
    pub filtered: BTreeMap<FilterReason, usize>,
}

/// A published event as its publication span names it.
#[derive(Debug, Clone)]
pub struct PublishedEvent {
    pub id: String,
    pub partner_id: String,
    pub event_type: String,
    pub trace: Option<crate::domain::trace::TraceContext>,
}

/// An event as publishing needs it.
#[derive(Debug, Clone, Copy)]
pub struct Published<'a> {
    pub id: &'a str,
    pub partner_id: &'a str,
    pub event_type: &'a str,
    pub subject_type: Option<&'a str>,
    pub subject_id: Option<&'a str>,
    /// The version `payload` is at, and the event's other renditions.
    pub schema_version: u32,
    pub payload: &'a str,
    pub renditions: &'a Renditions,
    /// When it was written (Unix ms): where its deliveries' window starts.
    pub created_at: i64,
}

/// Which new deliveries to create already claimed, for this instance's own
/// actors to send at once: those of endpoints it holds (`owned`), at most
/// `per_endpoint` each, leased until `lease_until`.
pub struct Preclaim<'a> {
    pub owned: &'a dyn Fn(&str) -> bool,
    /// Endpoints this instance holds: their work is announced to nobody
    /// (this instance wakes its own actors).
    pub held: &'a dyn Fn(&str) -> bool,
    pub per_endpoint: usize,
    pub lease_until: i64,
}

impl Preclaim<'_> {
    pub fn none() -> Preclaim<'static> {
        Preclaim {
            owned: &|_| false,
            held: &|_| false,
            per_endpoint: 0,
            lease_until: 0,
        }
    }
}

/// What publishing did: deliveries per endpoint, and those created claimed.
#[derive(Debug, Default)]
pub struct Publication {
    pub fanout: Fanout,
    /// (endpoint, the claimed delivery), in event order.
    pub claimed: Vec<(String, Claimed)>,
    /// Renditions projected for pinned endpoints, by event (now stored).
    pub projected: HashMap<String, Renditions>,
    /// Deliveries created `skipped`: no rendering at the pinned version.
    pub skipped: usize,
}

/// A batch routed: the deliveries to create and what routing found, not
/// yet written.
pub struct Routed<'a> {
    pub rows: Vec<Row<'a>>,
    pub out: Publication,
}

/// Routes `events` to `subscribers` ([`route`]), counting into a new
/// publication.
pub fn routed<'a>(
    catalog: &Catalog,
    subscribers: &'a HashMap<String, Vec<Subscriber>>,
    events: &[Published<'a>],
) -> Routed<'a> {
    let mut out = Publication::default();
    out.fanout.events = events.len();
    let rows = route(catalog, subscribers, events, &mut out);
    Routed { rows, out }
}

/// One delivery to create.
pub struct Row<'a> {
    pub id: String,
    /// The event's place in this batch.
    pub event: usize,
    pub event_id: &'a str,
    pub endpoint_id: &'a str,
    /// Its subject, when the endpoint orders and the event has one.
    pub ordering_key: Option<String>,
    pub claimed: bool,
    pub place: Place,
    pub rendering: Rendering,
}

/// One delivery per subscribed, active endpoint of each event's own
/// partner whose filter the event passes; counts what filters held back,
/// and the renditions projected for pinned endpoints, in `out`.
pub fn route<'a>(
    catalog: &Catalog,
    subscribers: &'a HashMap<String, Vec<Subscriber>>,
    events: &[Published<'a>],
    out: &mut Publication,
) -> Vec<Row<'a>> {
    let mut rows = Vec::new();
    for (i, e) in events.iter().enumerate() {
        // Read once, for the first endpoint with a filter.
        let mut data: Option<serde_json::Value> = None;
        for s in subscribers.get(e.partner_id).into_iter().flatten() {
            // Operational events about an endpoint go to the partner's other endpoints.
            let about_itself =
                e.event_type.starts_with("endpoint.") && e.subject_id == Some(s.id.as_str());
            if !subscribes(&s.event_types, e.event_type) || about_itself {
                continue;
            }
            if let Some(filter) = &s.filter {
                let data = data.get_or_insert_with(|| {
                    serde_json::from_str(e.payload).unwrap_or(serde_json::Value::Null)
                });
                if let Verdict::Filtered(reason) = filter.evaluate(&view(e, data)) {
                    *out.fanout.filtered.entry(reason).or_default() += 1;
                    continue;
                }
            }
            let rendering = render(catalog, e, s.pins.get(e.event_type).copied(), out);
            out.skipped += usize::from(rendering == Rendering::Skipped);
            let ordering_key = match (s.ordered, e.subject_type, e.subject_id) {
                (true, Some(t), Some(id)) => Some(subject_key(t, id)),
                _ => None,
            };
            rows.push(Row {
                id: new_id("dlv"),
                event: i,
                event_id: e.id,
                endpoint_id: &s.id,
                ordering_key,
                claimed: false,
                place: Place::Head,
                rendering,
            });
        }
    }
    rows
}

/// How `e` is sent to an endpoint pinned at `pinned` (if at all): a
/// projection made for another endpoint of this batch is reused.
fn render(
    catalog: &Catalog,
    e: &Published<'_>,
    pinned: Option<u32>,
    out: &mut Publication,
) -> Rendering {
    let projected = out
        .projected
        .get(e.id)
        .and_then(|p| pinned.filter(|v| p.contains_key(v)));
    let rendering = match projected {
        Some(version) => Rendering::Stored { version },
        None => choose(
            catalog,
            e.event_type,
            e.schema_version,
            e.payload,
            e.renditions,
            pinned,
        ),
    };
    if let Rendering::Projected { version, data } = &rendering {
        out.projected
            .entry(e.id.to_string())
            .or_default()
            .insert(*version, data.clone());
    }
    rendering
}

/// What a filter sees of `e`: its own partner's event, as the producer
/// sent it (`data` at the event's own version).
fn view<'a>(e: &Published<'a>, data: &'a serde_json::Value) -> EventView<'a> {
    EventView {
        event_type: e.event_type,
        subject: e.subject_type.zip(e.subject_id),
        data,
    }
}

/// Counts the placed rows per endpoint (and those waiting) in `out`, and
/// marks the ones created claimed: the first `per_endpoint` at the head of
/// each endpoint this instance owns.
pub fn mark_claims(rows: &mut [Row<'_>], preclaim: &Preclaim<'_>, out: &mut Publication) {
    for r in rows.iter_mut() {
        if r.rendering == Rendering::Skipped {
            continue;
        }
        // A waiting delivery needs no claim: closing its head makes it due.
        if r.place == Place::Waiting {
            out.fanout.waiting += 1;
            continue;
        }
        let n = out
            .fanout
            .deliveries
            .entry(r.endpoint_id.to_string())
            .or_default();
        *n += 1;
        r.claimed = r.place == Place::Head
            && *n <= preclaim.per_endpoint
            && (preclaim.owned)(r.endpoint_id);
    }
}

/// A new delivery row's state, as it is inserted.
#[derive(Debug, PartialEq, Eq)]
pub struct Initial {
    pub state: &'static str,
    /// `next_attempt_at`: now, or the claim's lease end.
    pub due: i64,
    pub claim_seq: i64,
    pub schema_version: Option<i32>,
    pub reason: Option<&'static str>,
    /// Its event's feed position, when it is ordered.
    pub ordering_seq: Option<i64>,
}

/// `r`'s row as inserted at `now_ms`, its event numbered from `first_seq`.
pub fn initial(
    r: &Row<'_>,
    preclaim: &Preclaim<'_>,
    now_ms: i64,
    first_seq: Option<i64>,
) -> Initial {
    let (state, due, claim_seq) = if r.claimed {
        ("delivering", preclaim.lease_until, 1)
    } else if r.rendering == Rendering::Skipped {
        ("skipped", now_ms, 0)
    } else if r.place == Place::Waiting {
        ("waiting", now_ms, 0)
    } else {
        ("pending", now_ms, 0)
    };
    Initial {
        state,
        due,
        claim_seq,
        schema_version: r.rendering.version().map(|v| v as i32),
        reason: (r.rendering == Rendering::Skipped).then_some(NO_RENDERING),
        ordering_seq: match (&r.ordering_key, first_seq) {
            (Some(_), Some(first)) => Some(first + r.event as i64),
            _ => None,
        },
    }
}

/// The rows created claimed, as the actors send them: (endpoint, claim),
/// in event order.
pub fn claimed(
    rows: Vec<Row<'_>>,
    events: &[Published<'_>],
    preclaim: &Preclaim<'_>,
    now_ms: i64,
) -> Vec<(String, Claimed)> {
    rows.into_iter()
        .filter(|r| r.claimed)
        .map(|r| {
            let claimed = Claimed {
                id: r.id,
                event_id: r.event_id.to_string(),
                attempt_count: 0,
                scheduled_attempts: 0,
                created_at: now_ms,
                window_from: events[r.event].created_at,
                replay_id: None,
                claim_seq: 1,
                lease_until: preclaim.lease_until,
                schema_version: r.rendering.version(),
                ordered: r.ordering_key.is_some(),
            };
            (r.endpoint_id.to_string(), claimed)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(place: Place, rendering: Rendering, ordering_key: Option<&str>) -> Row<'static> {
        Row {
            id: "dlv_1".into(),
            event: 2,
            event_id: "evt_1",
            endpoint_id: "ep_1",
            ordering_key: ordering_key.map(str::to_string),
            claimed: false,
            place,
            rendering,
        }
    }

    fn owning(owned: bool) -> Preclaim<'static> {
        Preclaim {
            owned: if owned { &|_| true } else { &|_| false },
            held: &|_| true,
            per_endpoint: 2,
            lease_until: 9_000,
        }
    }

    #[test]
    fn an_owned_endpoint_gets_its_first_deliveries_claimed_and_the_rest_as_rows() {
        let mut rows: Vec<Row<'_>> = (0..3)
            .map(|_| row(Place::Head, Rendering::AsSent, None))
            .collect();
        let mut out = Publication::default();
        mark_claims(&mut rows, &owning(true), &mut out);
        let claimed: Vec<bool> = rows.iter().map(|r| r.claimed).collect();
        assert_eq!(claimed, [true, true, false]);
        assert_eq!(out.fanout.deliveries["ep_1"], 3);
        let first = initial(&rows[0], &owning(true), 1_000, None);
        assert_eq!(
            (first.state, first.due, first.claim_seq),
            ("delivering", 9_000, 1)
        );
        let third = initial(&rows[2], &owning(true), 1_000, None);
        assert_eq!(
            (third.state, third.due, third.claim_seq),
            ("pending", 1_000, 0)
        );
    }

    #[test]
    fn waiting_and_skipped_deliveries_are_never_claimed() {
        let mut rows = vec![
            row(Place::Waiting, Rendering::AsSent, Some("customer:1")),
            row(Place::Head, Rendering::Skipped, None),
        ];
        let mut out = Publication::default();
        mark_claims(&mut rows, &owning(true), &mut out);
        assert!(rows.iter().all(|r| !r.claimed));
        assert_eq!(out.fanout.waiting, 1);
        let waiting = initial(&rows[0], &owning(true), 1_000, Some(40));
        assert_eq!(waiting.state, "waiting");
        assert_eq!(waiting.ordering_seq, Some(42), "its event's feed position");
        let skipped = initial(&rows[1], &owning(true), 1_000, Some(40));
        assert_eq!(skipped.state, "skipped");
        assert_eq!(skipped.reason, Some(NO_RENDERING));
        assert_eq!(skipped.ordering_seq, None);
    }

    #[test]
    fn a_pinned_rendering_is_sent_at_its_version() {
        let r = row(Place::Head, Rendering::Stored { version: 2 }, None);
        assert_eq!(
            initial(&r, &owning(false), 1_000, None).schema_version,
            Some(2)
        );
    }
}
