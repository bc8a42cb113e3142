//! The fast path for fresh events. The transaction that stores an event also
//! creates its deliveries; those for endpoints this instance holds are created
//! already claimed (a few per endpoint), and after the commit they are handed
//! in memory to the endpoint actors, which send at once: no wake, poll, fanout
//! claim or actor claim stands between a committed event and its first
//! attempt. The database stays the truth: if the process dies between commit
//! and send, the claimed rows' leases end and the poll finds them.

use std::collections::{HashMap, HashSet};

use sea_orm::DbBackend;

use crate::{
    domain::event::{NewEvent, envelope, envelope_at, envelope_with_data},
    store::{
        StoreError,
        fanout::{self, Preclaim, Publication, Published, Routed, To},
        notices, outbox,
        publish_at_once::{self, AtOnce},
        subscribers::Subscribers,
        writer::{self, Held},
    },
};

use super::{Shared, attempt::Job};

/// Requests of at most this many events take the fast path; a larger batch
/// is throughput, not latency, and is fanned out behind its answer (ingest
/// stays quick, the fanout creates deliveries in larger transactions).
pub const MAX_EVENTS: usize = 16;

/// Deliveries per endpoint and commit handed over in memory; the rest are
/// claimed by the actor as usual. Bounds what a large batch puts in memory.
pub(crate) const PER_ENDPOINT: usize = 32;

/// Stores `stored` (each event with the time it was written, none stored
/// yet) with their feed positions and publishes them: on PostgreSQL in one
/// statement when nothing in the group needs more
/// (`store::publish_at_once`), otherwise in one transaction (on SQLite on
/// the connection of the write `turn`).
pub async fn store_and_publish(
    shared: &Shared,
    turn: Option<&mut Held>,
    stored: &[(&NewEvent, i64)],
    now_ms: i64,
) -> Result<Publication, StoreError> {
    let published: Vec<Published<'_>> = stored
        .iter()
        .map(|(e, _)| Published {
            id: e.id.as_str(),
            partner_id: &e.partner_id,
            event_type: &e.event_type,
            subject_type: e.subject.as_ref().map(|s| s.subject_type.as_str()),
            subject_id: e.subject.as_ref().map(|s| s.id.as_str()),
            schema_version: e.schema_version,
            payload: &e.payload,
            renditions: &e.renditions,
            // Stored in this commit, at this time.
            created_at: now_ms,
        })
        .collect();
    let held = |endpoint: &str| shared.leases.confirmed(endpoint);
    // Held here, and its actor not claiming oldest first (work handed to it
    // now would only go back as rows).
    let owned = |endpoint: &str| {
        !shared.is_draining() && held(endpoint) && !shared.behind.contains(endpoint)
    };
    let preclaim = Preclaim {
        owned: &owned,
        held: &held,
        per_endpoint: PER_ENDPOINT,
        lease_until: now_ms + shared.config.delivery.lease.as_millis() as i64,
    };
    if shared.db.get_database_backend() != DbBackend::Postgres {
        return in_transaction(shared, turn, &preclaim, None, stored, &published, now_ms).await;
    }
    // On PostgreSQL the endpoints are known before the one statement: kept
    // from an earlier commit, or read now. The statement checks that they
    // are still so; if not, they are read again (once; then the
    // transaction reads them itself).
    let partners = fanout::partners_of(&published);
    for _ in 0..2 {
        let (subscribers, kept) = match shared.routing.get(&partners) {
            Some(kept) => (kept, true),
            None => {
                let read = fanout::subscribers_of(&shared.db, &published).await?;
                shared.routing.keep(&partners, &read);
                (read, false)
            }
        };
        let to = to(shared, &preclaim, &subscribers);
        let routed = if notices::expands(&published, &shared.routes) {
            None
        } else {
            let at_once =
                publish_at_once::publish(&shared.db, &to, &partners, stored, &published, now_ms);
            match at_once.await? {
                AtOnce::Published(publication) => return Ok(publication),
                AtOnce::Stale => {
                    shared.routing.forget(&partners);
                    continue;
                }
                AtOnce::Unfit(routed) => Some(routed),
            }
        };
        // The transaction trusts what it is given: only what was read now.
        let known = (!kept).then_some(Known {
            subscribers: &subscribers,
            routed,
        });
        return in_transaction(shared, turn, &preclaim, known, stored, &published, now_ms).await;
    }
    in_transaction(shared, turn, &preclaim, None, stored, &published, now_ms).await
}

/// What was read and routed before the transaction.
struct Known<'a> {
    subscribers: &'a Subscribers,
    /// The batch routed to them, if it was.
    routed: Option<Routed<'a>>,
}

/// Where this instance publishes to `subscribers`.
fn to<'a>(shared: &'a Shared, preclaim: &'a Preclaim<'a>, subscribers: &'a Subscribers) -> To<'a> {
    To {
        catalog: &shared.catalog,
        subscribers,
        instance_id: shared.leases.instance_id(),
        preclaim,
    }
}

/// The general publication in one transaction, to the endpoints already
/// `known` (and routed to them, if it was) or read inside it (SQLite's
/// transaction, on the write turn's connection, holds the write lock from
/// its begin).
async fn in_transaction<'a>(
    shared: &Shared,
    turn: Option<&mut Held>,
    preclaim: &Preclaim<'_>,
    known: Option<Known<'a>>,
    stored: &[(&NewEvent, i64)],
    published: &[Published<'a>],
    now_ms: i64,
) -> Result<Publication, StoreError> {
    let txn = writer::begin(&shared.db, turn).await?;
    // The feed positions first, so the events are stored with them: one
    // write per event. The counter stays locked to the commit, which the
    // group commit holds short.
    let first_seq = fanout::take_feed_positions(&txn, stored.len()).await?;
    outbox::insert_numbered(&txn, stored, first_seq).await?;
    let read;
    let (subscribers, routed) = match known {
        Some(known) => (known.subscribers, known.routed),
        None => {
            read = fanout::subscribers_of(&txn, published).await?;
            (&read, None)
        }
    };
    let to = to(shared, preclaim, subscribers);
    let publication = match routed {
        Some(routed) => {
            fanout::publish_routed(&txn, &to, published, routed, now_ms, Some(first_seq)).await?
        }
        None => fanout::publish_to(&txn, &to, published, now_ms, Some(first_seq)).await?,
    };
    notices::expand(&txn, published, &shared.routes, now_ms).await?;
    txn.commit().await?;
    Ok(publication)
}

/// What the fanout hands each endpoint after the commit.
#[derive(Default)]
pub struct Handover {
    /// Endpoint → its claimed deliveries, ready to send.
    pub jobs: HashMap<String, Vec<Job>>,
    /// Endpoints with deliveries left for their actor to claim.
    pub to_claim: HashSet<String>,
    /// The commit's number (`behind::Behind::committed`).
    pub commit: u64,
}

/// The committed publication as work for the actors.
pub fn handover(publication: Publication, events: &[NewEvent]) -> Handover {
    let by_id: HashMap<&str, &NewEvent> = events.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut bodies: HashMap<(&str, Option<u32>), bytes::Bytes> = HashMap::new();
    let mut out = Handover::default();
    for (endpoint, claimed) in publication.claimed {
        let Some(event) = by_id.get(claimed.event_id.as_str()) else {
            continue;
        };
        let version = claimed.schema_version;
        let body = match bodies.get(&(event.id.as_str(), version)) {
            Some(body) => body.clone(),
            None => {
                let rendered = match version {
                    None => Some(envelope(event)),
                    Some(v) => publication
                        .projected
                        .get(event.id.as_str())
                        .and_then(|p| p.get(&v))
                        .map(|data| envelope_with_data(event, v, data))
                        .or_else(|| envelope_at(event, v)),
                };
                // The rows are committed: what cannot be rendered here is
                // claimed again by the actor, from the stored renditions.
                let Some(bytes) = rendered else {
                    out.to_claim.insert(endpoint);
                    continue;
                };
                let body = bytes::Bytes::from(bytes);
                bodies.insert((event.id.as_str(), version), body.clone());
                body
            }
        };
        out.jobs
            .entry(endpoint)
            .or_default()
            .push(Job::new(claimed, event, body));
    }
    for (endpoint, n) in publication.fanout.deliveries {
        if out.jobs.get(&endpoint).is_none_or(|jobs| jobs.len() < n) {
            out.to_claim.insert(endpoint);
        }
    }
    out
}
