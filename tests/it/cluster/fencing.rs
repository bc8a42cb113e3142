//! Fencing: an instance paused (SIGSTOP) past the lease TTL loses its
//! endpoints to the others, and when it wakes (SIGCONT) it sends nothing for
//! them. Were it not fenced, it would send the work it had claimed or queued
//! beside the new owner: requests from it to those paths, a path with more
//! than two requests in flight, and deliveries that arrive twice.
//!
//! Requests are told apart by their source port: the test notes the local
//! ports of the paused process's connections to the receiver as it goes. A
//! request it was in the middle of writing when stopped ends as it wakes; no
//! lease can hold that back (only a token the receiver checked could), so
//! only requests begun awake are judged.

use std::{
    cell::{Cell, RefCell},
    collections::{BTreeMap, HashMap, HashSet},
    rc::Rc,
    time::{Duration, Instant},
};

use super::{CONCURRENCY, Fleet, LEASE_TTL, Lease, busiest};
use crate::harness::{SLOW, process::signal, receiver::Received, wait_until};

/// Leases as read now and then: when, and what.
type Samples = Vec<(Instant, Vec<Lease>)>;

/// Longer than the lease TTL and the delivery lease (5 s), so that the paused
/// instance's claims have all run out when it wakes.
const PAUSE: Duration = Duration::from_secs(6);

#[hookd_test_macros::test]
async fn a_paused_instance_sends_nothing_for_the_endpoints_taken_over_while_it_slept() {
    let started = Instant::now();
    let Some((mut fleet, ids)) = Fleet::registered(3, 20).await else {
        return;
    };
    // Six seconds of work per endpoint (60 deliveries, 2 at a time, 200 ms each).
    let mut events = fleet.publish(0, 60).await;
    fleet.wait_flowing().await;
    let leases = fleet.wait_settled().await;
    let (sleeper, sleeper_id) = busiest(&leases, &ids);
    let pid = fleet.nodes[sleeper].hookd.pid();
    let port = fleet.receiver.addr().port();

    // Watch its connections and the leases from now on.
    let watch = Watch::start(&fleet, pid, port);
    fleet.retire(sleeper);
    let owned = fleet.leases_of(&sleeper_id).await;
    signal(&fleet.nodes[sleeper].hookd, "STOP");
    let paused_at = Instant::now();
    assert!(!owned.is_empty(), "the paused instance owned no endpoint");

    // The others take its endpoints, with a higher epoch.
    let taken = wait_until(LEASE_TTL + Duration::from_secs(3), || async {
        let now = fleet.leases().await;
        owned
            .iter()
            .all(|before| {
                now.iter().any(|l| {
                    l.endpoint_id == before.endpoint_id
                        && l.owner.is_some()
                        && l.owner != before.owner
                        && l.epoch > before.epoch
                })
            })
            .then_some(paused_at.elapsed())
    })
    .await;
    let Some(taken_after) = taken else {
        panic!(
            "the paused instance's endpoints were not taken over within {:?}: before {owned:?}, now {:?}\n{}",
            LEASE_TTL + Duration::from_secs(3),
            fleet.leases().await,
            fleet.logs()
        );
    };

    // More work, so the new owners are busy when it wakes.
    events.extend(fleet.publish((sleeper + 1) % 3, 40).await);
    actix_rt::time::sleep(PAUSE.saturating_sub(paused_at.elapsed())).await;
    // From now on, what comes from its connections it sent awake, but for a
    // request the pause cut in two (its first bytes came before the pause).
    let resumed_at = Instant::now();
    signal(&fleet.nodes[sleeper].hookd, "CONT");
    let node = &mut fleet.nodes[sleeper];
    node.hookd
        .wait_healthy(&fleet.http, &node.base_url, Duration::from_secs(5))
        .await;
    fleet.wait_delivered(&events, SLOW).await;
    // Anything it would still send comes soon after it wakes: three
    // seconds awake are watched (the others keep delivering meanwhile, so
    // this is a window the checks below judge, not a wait for quiet).
    actix_rt::time::sleep(
        (resumed_at + Duration::from_secs(3)).saturating_duration_since(Instant::now()),
    )
    .await;
    let (ports, samples) = watch.stop().await;
    let received = fleet.receiver.received();
    let from_it = |r: &&Received| r.at > resumed_at && ports.contains(&r.peer.port());
    let cut_by_pause = |r: &Received| from_it(&r) && r.started < paused_at;

    // 1. Nothing begun awake from it to a path it did not own at the time.
    let stray: Vec<String> = received
        .iter()
        .filter(from_it)
        .filter(|r| !cut_by_pause(r))
        .filter(|r| !may_have_owned(&samples, &sleeper_id, &r.path, r.at))
        .map(|r| format!("{} {:?} after waking", r.path, r.at - resumed_at))
        .collect();
    assert!(
        stray.is_empty(),
        "after SIGCONT, the fenced instance sent {} request(s) to endpoints it no longer owned: {:?}",
        stray.len(),
        stray.iter().take(10).collect::<Vec<_>>()
    );
    // 2. No endpoint had more than its two requests in flight (but for one
    // the pause cut in two).
    let peaks = peak_in_flight(&received, cut_by_pause);
    assert!(
        peaks.values().all(|&n| n <= CONCURRENCY),
        "an endpoint had more than {CONCURRENCY} requests in flight at once: {peaks:?}"
    );
    // 3. A delivery first sent after the pause began went out once (those in
    // flight at the pause may go out again: their claims ran out).
    let cutoff = paused_at + Duration::from_secs(1);
    let mut first: HashMap<(String, String), (Instant, usize)> = HashMap::new();
    for r in &received {
        let Some(id) = r.header("webhook-id") else {
            continue;
        };
        let entry = first
            .entry((r.path.clone(), id.to_string()))
            .or_insert((r.at, 0));
        entry.0 = entry.0.min(r.at);
        entry.1 += 1;
    }
    let repeated: Vec<_> = first
        .iter()
        .filter(|(_, (at, n))| *at > cutoff && *n > 1)
        .map(|(k, (at, n))| (k.clone(), *n, *at - paused_at))
        .collect();
    assert!(
        repeated.is_empty(),
        "deliveries first sent after the pause went out more than once: {:?}",
        repeated.iter().take(10).collect::<Vec<_>>()
    );
    fleet.assert_no_panic();
    let cut = received.iter().filter(|r| cut_by_pause(r)).count();
    let from_it = received.iter().filter(from_it).count() - cut;
    let retaken = first_owned_after(&samples, &sleeper_id, resumed_at);
    eprintln!(
        "paused an instance owning {} of 20 endpoints; taken over {taken_after:?} into the pause; \
         awake, it held a lease again after {retaken:?} and sent {from_it} request(s), each while it held the lease \
         (and finished {cut} begun before the pause); {:?} in all",
        owned.len(),
        started.elapsed()
    );
}

/// Whether `owner` may have held the lease of `path` when a request arrived
/// at `at`: the samples just before and just after it do not both show
/// another owner (the sampling is 25 ms apart; a request outside them is
/// given the benefit of the doubt).
fn may_have_owned(samples: &Samples, owner: &str, path: &str, at: Instant) -> bool {
    let shows_owner = |leases: &Vec<Lease>| {
        leases
            .iter()
            .any(|l| l.path == path && l.owner.as_deref() == Some(owner))
    };
    let before = samples.iter().rev().find(|(t, _)| *t <= at);
    let after = samples.iter().find(|(t, _)| *t > at);
    match (before, after) {
        (Some((_, b)), Some((_, a))) => shows_owner(b) || shows_owner(a),
        _ => true,
    }
}

/// The most requests each path had in flight at once, as the receiver saw
/// them: from the request read in full to its answer written (or its
/// connection closed), leaving out those `skip` picks. A request still
/// unanswered counts as in flight to the end.
fn peak_in_flight(
    received: &[Received],
    skip: impl Fn(&Received) -> bool,
) -> BTreeMap<String, usize> {
    let end = Instant::now() + Duration::from_secs(3600);
    let mut edges: BTreeMap<String, Vec<(Instant, i32)>> = BTreeMap::new();
    for r in received.iter().filter(|r| !skip(r)) {
        let path = edges.entry(r.path.clone()).or_default();
        path.extend([(r.at, 1), (r.answered.unwrap_or(end), -1)]);
    }
    let peak = |mut path: Vec<(Instant, i32)>| {
        // An answer and the next request at one instant: the answer first.
        path.sort();
        let mut now = 0;
        path.iter()
            .map(|(_, d)| {
                now += d;
                now
            })
            .max()
            .unwrap_or(0) as usize
    };
    edges.into_iter().map(|(p, e)| (p, peak(e))).collect()
}

/// When, after `since`, the samples first show `owner` holding a lease again.
fn first_owned_after(samples: &Samples, owner: &str, since: Instant) -> Option<Duration> {
    samples
        .iter()
        .filter(|(t, _)| *t > since)
        .find(|(_, leases)| leases.iter().any(|l| l.owner.as_deref() == Some(owner)))
        .map(|(t, _)| *t - since)
}

/// Samples, every 25 ms, the leases and the local ports of one process's
/// TCP connections to the receiver.
struct Watch {
    stop: Rc<Cell<bool>>,
    ports: Rc<RefCell<HashSet<u16>>>,
    samples: Rc<RefCell<Samples>>,
    task: actix_rt::task::JoinHandle<()>,
}

impl Watch {
    fn start(fleet: &Fleet, pid: u32, receiver_port: u16) -> Watch {
        let stop = Rc::new(Cell::new(false));
        let ports = Rc::new(RefCell::new(HashSet::new()));
        let samples = Rc::new(RefCell::new(Vec::new()));
        let (t_stop, t_ports, t_samples) = (stop.clone(), ports.clone(), samples.clone());
        let leases = fleet.lease_reader();
        let task = actix_rt::spawn(async move {
            while !t_stop.get() {
                t_ports.borrow_mut().extend(local_ports(pid, receiver_port));
                if let Some(now) = leases.read().await {
                    t_samples.borrow_mut().push((Instant::now(), now));
                }
                actix_rt::time::sleep(Duration::from_millis(25)).await;
            }
        });
        Watch {
            stop,
            ports,
            samples,
            task,
        }
    }

    async fn stop(self) -> (HashSet<u16>, Samples) {
        self.stop.set(true);
        self.task.await.expect("the watch task should not panic");
        (self.ports.take(), self.samples.take())
    }
}

/// The local ports of `pid`'s TCP connections to `remote_port` (Linux: its
/// socket inodes in /proc/PID/fd, looked up in /proc/PID/net/tcp{,6}).
fn local_ports(pid: u32, remote_port: u16) -> Vec<u16> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let inodes: HashSet<String> = fds
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            Some(
                target
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_string(),
            )
        })
        .collect();
    let port_of = |address: &str| {
        let hex = address.rsplit(':').next()?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut ports = Vec::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() > 9
                && inodes.contains(fields[9])
                && port_of(fields[2]) == Some(remote_port)
                && let Some(port) = port_of(fields[1])
            {
                ports.push(port);
            }
        }
    }
    ports
}
