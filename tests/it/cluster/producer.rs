//! A producer that keeps publishing through the fleet's instances, as one
//! behind a load balancer would, and what it saw.

use std::{
    cell::{Cell, RefCell},
    rc::Rc,
    time::{Duration, Instant},
};

use super::Fleet;
use crate::harness::{
    SLOW,
    process::{event_batch, post_events},
};

/// One ingest answer as a producer saw it.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The base URL it was sent to.
    pub target: String,
    pub at: Instant,
    pub took: Duration,
    /// `Err` when no answer came (a refused connection, a timeout).
    pub status: Result<u16, String>,
    pub retry_after: bool,
}

/// What a producer did.
#[derive(Debug, Default)]
pub struct Produced {
    /// Events of batches answered 201 or 200 (already stored).
    pub committed: Vec<String>,
    pub answers: Vec<Answer>,
}

/// Publishes `batch` events every `every` through the fleet's targets in
/// turn, like a producer behind a load balancer: a batch answered with
/// anything but 200/201 is sent again (ingest is idempotent on `event_id`)
/// to the next target until it is taken.
pub struct Producer {
    log: Rc<RefCell<Produced>>,
    stop: Rc<Cell<bool>>,
    task: actix_rt::task::JoinHandle<()>,
}

impl Producer {
    pub fn start(fleet: &Fleet, batch: usize, every: Duration) -> Producer {
        let log = Rc::new(RefCell::new(Produced::default()));
        let stop = Rc::new(Cell::new(false));
        let (targets, partner, key) = (
            fleet.targets.clone(),
            fleet.store.partner_id.clone(),
            fleet.store.service_key.clone(),
        );
        let (task_log, task_stop) = (log.clone(), stop.clone());
        let task = actix_rt::spawn(async move {
            let http = awc::Client::builder()
                .timeout(Duration::from_secs(10))
                .finish();
            let mut turn = 0;
            while !task_stop.get() {
                let (ids, body) = event_batch(&partner, batch);
                loop {
                    let target = {
                        let targets = targets.borrow();
                        turn += 1;
                        targets.get(turn % targets.len().max(1)).cloned()
                    };
                    let Some(target) = target else {
                        actix_rt::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    };
                    let at = Instant::now();
                    let answer = post_events(&http, &target, &key, &body).await;
                    let taken = matches!(answer, Ok((200 | 201, _)));
                    task_log.borrow_mut().answers.push(Answer {
                        target: target.clone(),
                        at,
                        took: at.elapsed(),
                        status: answer.as_ref().map(|(s, _)| *s).map_err(Clone::clone),
                        retry_after: matches!(&answer, Ok((_, Some(_)))),
                    });
                    if taken {
                        task_log.borrow_mut().committed.extend(ids);
                        break;
                    }
                    actix_rt::time::sleep(Duration::from_millis(100)).await;
                }
                actix_rt::time::sleep(every).await;
            }
        });
        Producer { log, stop, task }
    }

    /// Events committed so far.
    pub fn committed(&self) -> usize {
        self.log.borrow().committed.len()
    }

    /// Stops after the batch under way is taken (at most `SLOW`); returns what it did.
    pub async fn finish(self) -> Produced {
        self.stop.set(true);
        actix_rt::time::timeout(SLOW, self.task)
            .await
            .expect("the producer should get its last batch taken within SLOW")
            .expect("the producer task should not panic");
        self.log.take()
    }
}

impl Produced {
    /// Answers that were neither 200/201 nor a prompt 503 with `Retry-After`,
    /// described with their time since `since`; those of the `killed`
    /// target (cut off by its death) are not judged.
    pub fn unexpected(&self, within: Duration, since: Instant, killed: &str) -> Vec<String> {
        self.answers
            .iter()
            .filter(|a| a.target != killed)
            .filter(|a| match a.status {
                Ok(200 | 201) => false,
                Ok(503) => !a.retry_after || a.took > within,
                _ => true,
            })
            .map(|a| {
                let at = a.at.saturating_duration_since(since);
                format!(
                    "{:?} from {} at {at:?}, after {:?}",
                    a.status, a.target, a.took
                )
            })
            .collect()
    }
}
