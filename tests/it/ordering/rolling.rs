//! A rolling restart of three instances on PostgreSQL under ordered
//! endpoints: each instance in turn is stopped (SIGTERM) and started again
//! while a producer publishes rounds of events of 32 subjects through the
//! instances taking traffic, so each endpoint changes hands with heads on
//! the wire, retrying and waiting. Every subject still arrives at every
//! endpoint in commit order, each event once.

use std::{
    cell::Cell,
    rc::Rc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{checker::OrderChecker, interleaved_places, ordered_endpoint_at};
use crate::{
    cluster::Fleet,
    harness::{SLOW, process::post_events, wait_until},
};

const SUBJECTS: usize = 32;
const ENDPOINTS: usize = 3;
/// Events per ingest request.
const BATCH: usize = 8;

#[hookd_test_macros::test]
async fn a_rolling_restart_keeps_every_subject_in_commit_order_at_every_endpoint() {
    let started = Instant::now();
    let Some((mut fleet, _)) = Fleet::registered(3, 0).await else {
        return;
    };
    let mut checkers = Vec::new();
    for _ in 0..ENDPOINTS {
        // Answers take 20 ms; one event of every eighth subject fails once
        // (and is retried after the default 5 s), so some heads are
        // retrying, with events behind them, when their endpoint moves.
        let checker = OrderChecker::start(Duration::from_millis(20), |subject, seq| {
            u32::from(subject % 8 == 3 && seq == 1)
        })
        .await;
        let id = ordered_endpoint_at(
            &fleet.http,
            &fleet.nodes[0].base_url,
            &fleet.store.partner_key,
            &checker.url(),
            json!({"concurrency": 4}),
        )
        .await;
        fleet.store.endpoint_ids.push(id);
        checkers.push(checker);
    }
    fleet.wait_settled().await;
    let producer = Rounds::start(&fleet, Duration::from_millis(300));
    let flowing = wait_until(SLOW, || async {
        checkers.iter().all(|c| c.accepted() > 0).then_some(())
    })
    .await;
    assert!(
        flowing.is_some(),
        "deliveries did not reach every endpoint within {SLOW:?}\n{}",
        fleet.logs()
    );

    for old in 0..3 {
        let took = fleet.terminate(old).await;
        let new = fleet.add().await;
        let ids = fleet.wait_registered().await;
        assert!(
            ids[new].is_some(),
            "{} is registered",
            fleet.nodes[new].name
        );
        fleet.wait_settled().await;
        eprintln!(
            "{} stopped in {took:?}, {} took its place; {} rounds published so far",
            fleet.nodes[old].name,
            fleet.nodes[new].name,
            producer.rounds()
        );
    }

    let rounds = producer.finish().await;
    let places: Vec<u64> = (0..rounds as u64).collect();
    for (i, checker) in checkers.iter().enumerate() {
        if let Err(e) = checker.wait_accepted(rounds * SUBJECTS, SLOW).await {
            panic!("endpoint {i}: {e}\n{}", fleet.logs());
        }
        assert_eq!(
            checker.violations(),
            Vec::<String>::new(),
            "endpoint {i}: a subject went out of commit order during the rolling restart"
        );
        let accepted = checker.first_accepts();
        assert_eq!(accepted.len(), SUBJECTS, "endpoint {i}: every subject");
        for (subject, first) in &accepted {
            assert_eq!(*first, places, "endpoint {i}, subject {subject}");
        }
        assert_eq!(
            checker.repeats(),
            0,
            "endpoint {i}: a graceful restart sends no accepted event again"
        );
    }
    fleet.assert_no_panic();
    eprintln!(
        "rolling restart: {rounds} rounds of {SUBJECTS} subjects x {ENDPOINTS} endpoints in commit order, \
         each once; {:?} in all",
        started.elapsed()
    );
}

/// A producer behind a load balancer: every `every`, one round (each
/// subject's next event, in an order that changes from round to round) in
/// requests of `BATCH` through the fleet's instances in turn. A request
/// not answered 200 or 201 goes again to the next instance (ingest is
/// idempotent on `event_id`) before anything after it, so each subject's
/// events commit in order.
struct Rounds {
    done: Rc<Cell<usize>>,
    stop: Rc<Cell<bool>>,
    task: actix_rt::task::JoinHandle<()>,
}

impl Rounds {
    fn start(fleet: &Fleet, every: Duration) -> Rounds {
        let (done, stop) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
        let (task_done, task_stop) = (Rc::clone(&done), Rc::clone(&stop));
        let targets = fleet.targets.clone();
        let (partner, key) = (
            fleet.store.partner_id.clone(),
            fleet.store.service_key.clone(),
        );
        let task = actix_rt::spawn(async move {
            let http = awc::Client::builder()
                .timeout(Duration::from_secs(10))
                .finish();
            let mut turn = 0;
            while !task_stop.get() {
                let round = task_done.get();
                let mut events = interleaved_places(&partner, SUBJECTS, round..round + 1);
                events.rotate_left(round * 5 % SUBJECTS);
                for event in &mut events {
                    event["event_id"] = Value::from(hookd::domain::ids::new_id("evt"));
                }
                for chunk in events.chunks(BATCH) {
                    let body = Value::Array(chunk.to_vec()).to_string();
                    let since = Instant::now();
                    loop {
                        let target = {
                            let targets = targets.borrow();
                            turn += 1;
                            targets.get(turn % targets.len().max(1)).cloned()
                        };
                        let answer = match &target {
                            Some(target) => Some(post_events(&http, target, &key, &body).await),
                            None => None,
                        };
                        if matches!(answer, Some(Ok((200 | 201, _)))) {
                            break;
                        }
                        assert!(
                            since.elapsed() < SLOW,
                            "no instance took a batch within {SLOW:?}: {answer:?} from {target:?}"
                        );
                        actix_rt::time::sleep(Duration::from_millis(100)).await;
                    }
                }
                task_done.set(round + 1);
                actix_rt::time::sleep(every).await;
            }
        });
        Rounds { done, stop, task }
    }

    /// Rounds taken so far.
    fn rounds(&self) -> usize {
        self.done.get()
    }

    /// Stops after the round under way is taken; returns how many were.
    async fn finish(self) -> usize {
        self.stop.set(true);
        actix_rt::time::timeout(SLOW, self.task)
            .await
            .expect("the producer should finish its round within SLOW")
            .expect("the producer task should not panic");
        self.done.get()
    }
}
