//! `--scenario ordered`: batches of events about `--subjects` subjects to
//! one endpoint that orders per subject (`--ordering subject`, or `none` to
//! compare), and a check that each subject's events arrived in commit order.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait as _, DatabaseConnection, Statement};

use crate::args::Args;
use crate::inproc;
use crate::load::Load;

pub async fn run(backend: &str, args: &Args) -> anyhow::Result<bool> {
    let (events, batch, subjects) = (args.events, args.batch, args.subjects);
    let ordered = args.ordering == "subject";
    let in_flight = args.concurrency.unwrap_or(4);
    let load = Load {
        subjects,
        ordered,
        events,
        batch,
        in_flight,
        pace: Duration::ZERO,
    };
    let Some(outcome) = inproc::run_healthy(backend, args, 1, load).await? else {
        return Ok(true);
    };
    let conditions = format!(
        "{events} events about {subjects} subject(s) x 1 endpoint, ordering {}, {batch}/POST, {in_flight} POSTs in flight",
        args.ordering
    );
    let counted = outcome.print("ordered", backend, &conditions);
    // Out of order is what `none` is for; for `subject` it is a failure.
    let in_order = !ordered || outcome.order_violations == Some(0);
    if !in_order {
        println!("FAIL ordered {backend}: events arrived out of their subject's commit order");
    }
    Ok(counted && in_order)
}

/// Each event's subject and feed position.
pub struct Feed(HashMap<String, (String, i64)>);

pub async fn feed(db: &DatabaseConnection) -> anyhow::Result<Feed> {
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT event_id, subject_id, feed_seq FROM outbox_event WHERE subject_id IS NOT NULL",
        ))
        .await?;
    let mut out = HashMap::new();
    for r in rows {
        let id: String = r.try_get("", "event_id")?;
        let subject: String = r.try_get("", "subject_id")?;
        let seq: Option<i64> = r.try_get("", "feed_seq")?;
        out.insert(id, (subject, seq.unwrap_or(i64::MAX)));
    }
    Ok(Feed(out))
}

/// How many events an endpoint first received before an event of the same
/// subject that was committed before them.
pub fn violations(feed: &Feed, receipts: &HashMap<String, Instant>) -> usize {
    let mut by_subject: HashMap<&str, Vec<(i64, Instant)>> = HashMap::new();
    for (id, at) in receipts {
        if let Some((subject, seq)) = feed.0.get(id) {
            by_subject.entry(subject).or_default().push((*seq, *at));
        }
    }
    by_subject
        .values_mut()
        .map(|events| {
            events.sort_unstable();
            events.windows(2).filter(|w| w[1].1 < w[0].1).count()
        })
        .sum()
}
