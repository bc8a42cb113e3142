//! The incident sweep, run with each health sweep: reads what the store
//! observes (each partner's oldest overdue delivery; whether the database
//! answers at all), lets `domain::incident` decide, and opens or resolves
//! incidents with their notices, each in a transaction of its own. Every
//! instance sweeps; the store's unique index and guarded updates make each
//! incident, and each notice, happen once.

use crate::domain::incident::{self, Cause, Decision, OpenedBy, Outage};
use crate::store::{
    StoreError, incident_watch,
    incidents::{self, Opening},
};

use super::Shared;

/// One sweep. `outage` is what this instance remembers of an outage of the
/// database it is living through; `began` is when the health sweep this one
/// follows began, the latest an outage it meets can have begun (a database
/// that went away can hold each read for the pool's acquire timeout).
/// Returns how many notices were queued, for the fanout to be woken.
pub async fn sweep(
    shared: &Shared,
    began: i64,
    outage: &mut Outage,
    quiet: &mut Option<i64>,
) -> usize {
    let config = &shared.config.incidents;
    if !config.enabled {
        return 0;
    }
    let now = shared.clock.now_ms();
    let overdue = match incident_watch::overdue(&shared.db, now, now).await {
        Ok(overdue) => overdue,
        Err(e) => {
            // Whatever the cause, nothing is written: the outage began when
            // this sweep did at the latest.
            outage.failed(began);
            tracing::warn!(error = %e, "the incident sweep cannot read the database");
            return 0;
        }
    };
    let mut events = 0;
    let ended = outage.answered(now, ms(config.database_down));
    match database(shared, ended, &overdue, now).await {
        Ok(made) => events += made,
        Err(e) => {
            // An outage not yet told is told by the next sweep.
            if let Some((since, _)) = ended {
                outage.failed(since);
            }
            tracing::warn!(error = %e, "opening or resolving database incidents failed");
        }
    }
    match instances(shared, quiet, &overdue, now).await {
        Ok(made) => events += made,
        Err(e) => tracing::warn!(error = %e, "opening or resolving instances incidents failed"),
    }
    match backlog(shared, &overdue, now).await {
        Ok(made) => events += made,
        Err(e) => tracing::warn!(error = %e, "opening or resolving backlog incidents failed"),
    }
    events
}

fn ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Opens a backlog incident for each partner whose oldest overdue delivery
/// waited the threshold, and resolves those whose partner caught up.
async fn backlog(
    shared: &Shared,
    overdue: &std::collections::HashMap<String, i64>,
    now: i64,
) -> Result<usize, StoreError> {
    let backlog_age = ms(shared.config.incidents.backlog_age);
    let open = incidents::open_of(&shared.db, Cause::Backlog).await?;
    let mut events = 0;
    for o in &open {
        let oldest = overdue.get(&o.partner_id).copied();
        if incident::backlog(oldest, true, None, now, backlog_age) == Decision::Resolve {
            events += resolve(shared, &o.id, now).await?;
        }
    }
    // Those whose oldest overdue delivery waited the threshold, then the
    // same rule again with when their last backlog incident ended.
    let candidates: Vec<(&String, i64)> = overdue
        .iter()
        .filter(|(partner, _)| !open.iter().any(|o| &o.partner_id == *partner))
        .filter(|(_, due)| {
            incident::backlog(Some(**due), false, None, now, backlog_age) != Decision::Nothing
        })
        .map(|(partner, due)| (partner, *due))
        .collect();
    if candidates.is_empty() {
        return Ok(events);
    }
    let ended = incidents::last_resolved(&shared.db, Cause::Backlog).await?;
    let message = incident::backlog_message(shared.config.incidents.backlog_age);
    for (partner, due) in candidates {
        let last = ended.get(partner).copied();
        if let Decision::Open { started_at } =
            incident::backlog(Some(due), false, last, now, backlog_age)
        {
            let opening = Opening {
                partner_id: partner,
                cause: Cause::Backlog,
                message: &message,
                started_at,
                opened_by: OpenedBy::Detector,
            };
            events += open_one(shared, &opening, now).await?;
        }
    }
    Ok(events)
}

/// After an outage of the database that lasted the threshold (`ended`:
/// its start and end), opens a database incident for each partner with
/// deliveries due meanwhile; resolves the open ones whose partner caught up.
async fn database(
    shared: &Shared,
    ended: Option<(i64, i64)>,
    overdue: &std::collections::HashMap<String, i64>,
    now: i64,
) -> Result<usize, StoreError> {
    let mut events = 0;
    if let Some((since, back)) = ended {
        tracing::warn!(
            down_ms = back - since,
            "the database was unreachable for longer than incidents.database_down; its partners are told"
        );
        let message = incident::database_message(since);
        for partner in incident_watch::due_during(&shared.db, since, back).await? {
            let opening = Opening {
                partner_id: &partner,
                cause: Cause::Database,
                message: &message,
                started_at: since,
                opened_by: OpenedBy::Detector,
            };
            events += open_one(shared, &opening, now).await?;
        }
        // Resolved at the earliest on the next sweep, after a first look at
        // what the deliveries did once it was back.
        return Ok(events);
    }
    for o in incidents::open_of(&shared.db, Cause::Database).await? {
        let oldest = overdue.get(&o.partner_id).copied();
        if incident::caught_up_since(oldest, o.opened_at) {
            events += resolve(shared, &o.id, now).await?;
        }
    }
    Ok(events)
}

/// When no instance that delivers was alive for `incidents.instances_down`,
/// opens an instances incident for each partner with deliveries due since
/// the last one was; resolves the open ones once one delivers again and the
/// partner caught up. An instance that delivers reports the silence it
/// started into (`quiet_at_start`: the pulse read before its first
/// heartbeat, if silent for the threshold then); an API-only one watches
/// the pulse as it goes.
async fn instances(
    shared: &Shared,
    quiet_at_start: &mut Option<i64>,
    overdue: &std::collections::HashMap<String, i64>,
    now: i64,
) -> Result<usize, StoreError> {
    let silent = if shared.config.cluster.role.delivers() {
        quiet_at_start.take()
    } else {
        let pulse = crate::store::pulse::last(&shared.db).await?;
        incident::silent_since(pulse, now, ms(shared.config.incidents.instances_down))
    };
    let mut events = 0;
    if let Some(since) = silent {
        let message = incident::instances_message(since);
        for partner in incident_watch::due_during(&shared.db, since, now).await? {
            let opening = Opening {
                partner_id: &partner,
                cause: Cause::Instances,
                message: &message,
                started_at: since,
                opened_by: OpenedBy::Detector,
            };
            events += open_one(shared, &opening, now).await?;
        }
        return Ok(events);
    }
    for o in incidents::open_of(&shared.db, Cause::Instances).await? {
        let oldest = overdue.get(&o.partner_id).copied();
        if incident::caught_up_since(oldest, o.opened_at) {
            events += resolve(shared, &o.id, now).await?;
        }
    }
    Ok(events)
}

async fn open_one(shared: &Shared, opening: &Opening<'_>, now: i64) -> Result<usize, StoreError> {
    let _turn = shared.write_turn().await;
    let opened = incidents::open_now(&shared.db, opening, now).await?;
    Ok(opened.map_or(0, |i| {
        tracing::warn!(incident = %i.id, partner = %i.partner_id, cause = %i.cause,
            "incident opened: the partner is told with hookd.incident.opened");
        1
    }))
}

async fn resolve(shared: &Shared, id: &str, now: i64) -> Result<usize, StoreError> {
    let _turn = shared.write_turn().await;
    let resolved = incidents::resolve_now(&shared.db, id, now).await?;
    Ok(resolved.map_or(0, |i| {
        tracing::info!(incident = %i.id, partner = %i.partner_id, delayed_events = ?i.delayed_events,
            "incident resolved: the partner is told with hookd.incident.resolved");
        1
    }))
}
