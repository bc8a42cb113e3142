//! What an instance does with the leases it sees, decided without effects:
//! take free endpoints it is preferred for, take over the endpoints of dead
//! instances once it has itself been alive for a lease period, and hand back
//! endpoints another live instance is now preferred for. Nothing moves
//! between two healthy instances unless membership changed. An endpoint on
//! its way here from a live owner is awaited: taken the moment it is handed
//! back, not at the next heartbeat. A peer whose heartbeat is going stale is
//! looked at again the moment its leases run out (`recheck_in`).

use std::{collections::HashSet, time::Duration};

use super::rendezvous::preferred;
use crate::store::cluster::LeaseRow;

/// The cluster as one instance sees it.
#[derive(Debug, Clone)]
pub struct Membership {
    pub me: String,
    /// Instances whose heartbeat is fresh, draining or not (they still own
    /// what they hold).
    pub alive: HashSet<String>,
    /// Alive and not draining: who may be given endpoints. Includes `me`
    /// unless this instance is draining.
    pub candidates: Vec<String>,
    /// This instance has heartbeated without a gap for a whole lease period:
    /// every other live instance has had the chance to renew, so a stale
    /// heartbeat now means a dead instance, not a database that was away.
    pub settled: bool,
}

/// The steps, each carrying the epoch the row was seen with.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Free, or held by a dead instance, and preferred here.
    pub take: Vec<String>,
    /// Held here, but a live instance is now preferred.
    pub hand_back: Vec<String>,
    /// Held here and staying.
    pub keep: Vec<(String, i64)>,
    /// Held by another live instance, but preferred here: it is handing
    /// them back.
    pub awaited: Vec<String>,
}

pub fn plan(m: &Membership, leases: &[LeaseRow]) -> Plan {
    let mut out = Plan::default();
    for row in leases {
        let mine = preferred(&m.candidates, &row.endpoint_id) == Some(m.me.as_str());
        match &row.owner {
            Some(owner) if *owner == m.me => {
                if mine || m.candidates.is_empty() {
                    out.keep.push((row.endpoint_id.clone(), row.epoch));
                } else {
                    out.hand_back.push(row.endpoint_id.clone());
                }
            }
            Some(owner) if m.alive.contains(owner) && mine => {
                out.awaited.push(row.endpoint_id.clone());
            }
            Some(owner) if m.alive.contains(owner) => {}
            Some(_) if mine && m.settled => out.take.push(row.endpoint_id.clone()),
            Some(_) => {}
            None if mine => out.take.push(row.endpoint_id.clone()),
            None => {}
        }
    }
    out
}

/// When to look at the cluster again, sooner than the next heartbeat (due
/// in `heartbeat`): just after the first lease of another instance runs out,
/// given each live instance's heartbeat age (ms, the database's clock).
/// `None` if none runs out before the next heartbeat anyway.
pub fn recheck_in(
    ages: impl IntoIterator<Item = i64>,
    ttl_ms: i64,
    heartbeat: Duration,
) -> Option<Duration> {
    /// Past the expiry, so the database sees it expired too.
    const PAST: Duration = Duration::from_millis(20);
    let first = ages.into_iter().map(|age| ttl_ms - age).min()?;
    let in_ms = u64::try_from(first.max(0)).unwrap_or(0);
    let at = Duration::from_millis(in_ms) + PAST;
    (at < heartbeat).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::rendezvous::preferred;

    fn membership(me: &str, alive: &[&str], settled: bool) -> Membership {
        Membership {
            me: me.into(),
            alive: alive.iter().map(|s| s.to_string()).collect(),
            candidates: alive.iter().map(|s| s.to_string()).collect(),
            settled,
        }
    }

    fn row(endpoint: &str, owner: Option<&str>) -> LeaseRow {
        LeaseRow {
            endpoint_id: endpoint.into(),
            owner: owner.map(str::to_string),
            epoch: 7,
        }
    }

    /// An endpoint that `who` is preferred for among `among`.
    fn endpoint_preferring(who: &str, among: &[&str]) -> String {
        let candidates: Vec<String> = among.iter().map(|s| s.to_string()).collect();
        (0..)
            .map(|i| format!("ep_{i}"))
            .find(|e| preferred(&candidates, e) == Some(who))
            .unwrap()
    }

    #[test]
    fn a_free_endpoint_is_taken_only_by_its_preferred_instance() {
        let e = endpoint_preferring("a", &["a", "b"]);
        let rows = [row(&e, None)];
        assert_eq!(
            plan(&membership("a", &["a", "b"], false), &rows).take,
            vec![e.clone()]
        );
        assert!(
            plan(&membership("b", &["a", "b"], true), &rows)
                .take
                .is_empty()
        );
    }

    #[test]
    fn a_live_owners_endpoint_is_not_taken_but_awaited_when_preferred_here() {
        let e = endpoint_preferring("a", &["a", "b"]);
        let p = plan(&membership("a", &["a", "b"], true), &[row(&e, Some("b"))]);
        assert!(p.take.is_empty() && p.keep.is_empty() && p.hand_back.is_empty());
        assert_eq!(p.awaited, vec![e]);
        let other = endpoint_preferring("b", &["a", "b"]);
        let p = plan(
            &membership("a", &["a", "b"], true),
            &[row(&other, Some("b"))],
        );
        assert_eq!(p, Plan::default(), "not preferred here: not awaited");
    }

    #[test]
    fn a_peer_going_stale_is_looked_at_again_just_after_its_leases_run_out() {
        let beat = Duration::from_secs(5);
        assert_eq!(
            recheck_in([1_000, 13_000], 15_000, beat),
            Some(Duration::from_millis(2_020)),
            "the stalest peer's lease runs out in 2 s"
        );
        assert_eq!(
            recheck_in([1_000, 4_000], 15_000, beat),
            None,
            "healthy peers: the next heartbeat comes first"
        );
        assert_eq!(recheck_in([], 15_000, beat), None, "alone");
        assert_eq!(
            recheck_in([15_500], 15_000, beat),
            Some(Duration::from_millis(20)),
            "already run out"
        );
    }

    #[test]
    fn a_dead_owners_endpoint_is_taken_over_only_once_settled() {
        let e = endpoint_preferring("a", &["a", "b"]);
        let rows = [row(&e, Some("dead"))];
        assert!(
            plan(&membership("a", &["a", "b"], false), &rows)
                .take
                .is_empty()
        );
        assert_eq!(
            plan(&membership("a", &["a", "b"], true), &rows).take,
            vec![e]
        );
    }

    #[test]
    fn an_endpoint_a_newcomer_is_preferred_for_is_handed_back() {
        let e = endpoint_preferring("c", &["a", "c"]);
        let p = plan(&membership("a", &["a", "c"], true), &[row(&e, Some("a"))]);
        assert_eq!(p.hand_back, vec![e]);
        assert!(p.keep.is_empty());
    }

    #[test]
    fn an_owned_endpoint_preferred_here_is_kept_with_its_epoch() {
        let e = endpoint_preferring("a", &["a", "b"]);
        let p = plan(&membership("a", &["a", "b"], true), &[row(&e, Some("a"))]);
        assert_eq!(p.keep, vec![(e, 7)]);
    }

    #[test]
    fn a_draining_instance_hands_everything_back_to_the_others() {
        let e = endpoint_preferring("a", &["a", "b"]);
        let mut m = membership("a", &["a", "b"], true);
        m.candidates = vec!["b".into()];
        assert_eq!(plan(&m, &[row(&e, Some("a"))]).hand_back, vec![e]);
    }

    #[test]
    fn with_no_one_else_to_take_them_an_instance_keeps_its_endpoints() {
        let mut m = membership("a", &["a"], true);
        m.candidates.clear();
        let p = plan(&m, &[row("ep_1", Some("a"))]);
        assert_eq!(p.keep, vec![("ep_1".to_string(), 7)]);
    }
}
