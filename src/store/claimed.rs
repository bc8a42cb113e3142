//! A claimed delivery as the store returns it to an endpoint actor, and
//! how a row becomes one: shared by the claims and by the ordering, which
//! claims the next delivery of a subject when its head closes.

/// A delivery claimed by an endpoint actor: it is `delivering` until its
/// outcome is recorded or its lease ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub id: String,
    pub event_id: String,
    pub attempt_count: u32,
    /// Scheduled attempts so far: the position in the retry schedule.
    pub scheduled_attempts: u32,
    pub created_at: i64,
    /// Where its delivery window starts: its event's creation (Unix ms).
    /// An event written long before its fanout (a backlog) has less of
    /// its window left when its deliveries are made.
    pub window_from: i64,
    /// Set when this is a manual replay rather than a scheduled attempt.
    pub replay_id: Option<String>,
    /// This claim's number on its row (the delivery's, or the replay's):
    /// the record and any release must find it unchanged.
    pub claim_seq: i64,
    /// When this claim's lease ends (Unix ms): after it, another claim may
    /// take the delivery, so no attempt starts that could outlive it.
    pub lease_until: i64,
    /// The version the delivery is sent at (an endpoint's pin); `None`: the
    /// event's own.
    pub schema_version: Option<u32>,
    /// One of an ordered endpoint's subjects: once it is closed, the next
    /// delivery of its subject becomes due.
    pub ordered: bool,
}

/// The columns `claimed_row` reads.
/// The window starts at the event's creation; at the delivery's own when
/// the event is gone.
pub(super) const CLAIMED_COLUMNS: &str = "id, event_id, attempt_count, scheduled_attempts, created_at, claim_seq, schema_version, ordering_key, \
     COALESCE((SELECT o.created_at FROM outbox_event o WHERE o.event_id = delivery.event_id), delivery.created_at) AS window_from";

pub(super) fn claimed_row(
    r: &sea_orm::QueryResult,
    lease_until: i64,
) -> Result<Claimed, sea_orm::DbErr> {
    Ok(Claimed {
        id: r.try_get("", "id")?,
        event_id: r.try_get("", "event_id")?,
        attempt_count: u32::try_from(r.try_get::<i32>("", "attempt_count")?).unwrap_or(0),
        scheduled_attempts: u32::try_from(r.try_get::<i32>("", "scheduled_attempts")?).unwrap_or(0),
        created_at: r.try_get("", "created_at")?,
        window_from: r.try_get("", "window_from")?,
        replay_id: None,
        claim_seq: r.try_get("", "claim_seq")?,
        lease_until,
        schema_version: r
            .try_get::<Option<i32>>("", "schema_version")?
            .and_then(|v| u32::try_from(v).ok()),
        ordered: r.try_get::<Option<String>>("", "ordering_key")?.is_some(),
    })
}
