//! What the overview's charts read from the attempts: attempts per time
//! bucket by result, and the event-to-delivery latency of successful
//! scheduled attempts (the attempt's end minus the delivery's creation, as
//! `hookd_delivery_latency_seconds` measures it) as p50 and p99 per bucket.
//! The database counts the latencies into fixed classes ([`LATENCY_BOUNDS_MS`]),
//! so a day of attempts never leaves it row by row; the percentiles are read
//! off those counts.

use std::sync::LazyLock;

use sea_orm::ConnectionTrait;

use super::{StoreError, query_all, sql};

/// `count` buckets of `step_ms` each, the first starting at `start_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buckets {
    pub start_ms: i64,
    pub step_ms: i64,
    pub count: usize,
}

impl Buckets {
    /// The `count` buckets of `step_ms` (aligned to multiples of it) whose
    /// last one holds `now_ms`.
    pub fn ending_at(now_ms: i64, step_ms: i64, count: usize) -> Buckets {
        let last = now_ms - now_ms.rem_euclid(step_ms);
        Buckets {
            start_ms: last - step_ms * (count as i64 - 1),
            step_ms,
            count,
        }
    }

    pub fn end_ms(&self) -> i64 {
        self.start_ms + self.step_ms * self.count as i64
    }

    /// The bucket a time falls in, if any.
    pub fn index(&self, at_ms: i64) -> Option<usize> {
        if at_ms < self.start_ms || at_ms >= self.end_ms() {
            return None;
        }
        usize::try_from((at_ms - self.start_ms) / self.step_ms).ok()
    }
}

/// `text` over the buckets `b`: its `?` take, in order, the first
/// bucket's start and the step (to number each row's bucket), then the
/// start and end of the range.
fn bucketed(db: &impl ConnectionTrait, text: &str, b: Buckets) -> sea_orm::Statement {
    let values = vec![
        b.start_ms.into(),
        b.step_ms.into(),
        b.start_ms.into(),
        b.end_ms().into(),
    ];
    sql(db.get_database_backend(), text, values)
}

/// Attempts per bucket: the delivered (2xx) and the failed ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptCounts {
    pub delivered: Vec<i64>,
    pub failed: Vec<i64>,
}

/// Attempts (scheduled and manual) started in each bucket, by result.
pub async fn attempts(db: &impl ConnectionTrait, b: Buckets) -> Result<AttemptCounts, StoreError> {
    let rows = query_all(
        db,
        bucketed(
            db,
            "SELECT (started_at - ?) / ? AS b, \
             SUM(CASE WHEN error_category IS NULL THEN 1 ELSE 0 END) AS delivered, \
             SUM(CASE WHEN error_category IS NULL THEN 0 ELSE 1 END) AS failed \
             FROM attempt WHERE started_at >= ? AND started_at < ? GROUP BY 1",
            b,
        ),
        |r| {
            let n = |c: &str| {
                r.try_get::<Option<i64>>("", c)
                    .map(Option::unwrap_or_default)
            };
            Ok((r.try_get::<i64>("", "b")?, n("delivered")?, n("failed")?))
        },
    )
    .await?;
    let mut out = AttemptCounts {
        delivered: vec![0; b.count],
        failed: vec![0; b.count],
    };
    for (i, delivered, failed) in rows {
        if let Some(i) = usize::try_from(i).ok().filter(|i| *i < b.count) {
            out.delivered[i] = delivered;
            out.failed[i] = failed;
        }
    }
    Ok(out)
}

/// The upper bounds (exclusive, in ms) of the latency classes: about ten
/// a decade from 1 ms to 10⁷ ms (2.8 h), so a percentile read off them
/// (a class's upper bound) is at most a third above the true value from
/// 10 ms up. Past the last bound is one more class.
pub static LATENCY_BOUNDS_MS: LazyLock<Vec<i64>> = LazyLock::new(|| {
    let mut bounds = vec![1, 2, 3, 4, 5, 6, 8];
    let mantissas = [100, 125, 160, 200, 250, 320, 400, 500, 630, 800];
    for decade in 0..6 {
        let scale = 10_i64.pow(decade);
        bounds.extend(mantissas.iter().map(|m| m * scale / 10));
    }
    bounds.push(10_000_000);
    bounds
});

/// The latency that `q` (0 < q ≤ 1) of the counted values are under, as the
/// upper bound of the class holding that rank; `None` when nothing was
/// counted. `counts[i]` counts the values of class `i` (one more class than
/// bounds: the values past the last bound, read as the last bound).
pub fn quantile(counts: &[u64], bounds: &[i64], q: f64) -> Option<i64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (class, n) in counts.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return bounds.get(class).or(bounds.last()).copied();
        }
    }
    bounds.last().copied()
}

/// p50 and p99 per bucket (`None` where no attempt succeeded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Latencies {
    pub p50: Vec<Option<i64>>,
    pub p99: Vec<Option<i64>>,
}

/// The `CASE` that names the class of latency `x`.
fn class_of_x() -> String {
    let mut case = String::from("CASE");
    for (i, bound) in LATENCY_BOUNDS_MS.iter().enumerate() {
        case.push_str(&format!(" WHEN x < {bound} THEN {i}"));
    }
    case.push_str(&format!(" ELSE {} END", LATENCY_BOUNDS_MS.len()));
    case
}

/// Event-to-delivery latency of the successful scheduled attempts started
/// in each bucket.
pub async fn latencies(db: &impl ConnectionTrait, b: Buckets) -> Result<Latencies, StoreError> {
    let text = format!(
        "SELECT (started_at - ?) / ? AS b, {} AS c, COUNT(*) AS n FROM (\
         SELECT a.started_at, a.started_at + COALESCE(a.latency_ms, 0) - d.created_at AS x \
         FROM attempt a JOIN delivery d ON d.id = a.delivery_id \
         WHERE a.started_at >= ? AND a.started_at < ? AND a.trigger = 'scheduled' \
         AND a.error_category IS NULL) t GROUP BY 1, 2",
        class_of_x()
    );
    let rows = query_all(db, bucketed(db, &text, b), |r| {
        Ok((
            r.try_get::<i64>("", "b")?,
            r.try_get::<i32>("", "c")?,
            r.try_get::<i64>("", "n")?,
        ))
    })
    .await?;
    let classes = LATENCY_BOUNDS_MS.len() + 1;
    let mut histograms = vec![vec![0_u64; classes]; b.count];
    for (i, class, n) in rows {
        let (Ok(i), Ok(class)) = (usize::try_from(i), usize::try_from(class)) else {
            continue;
        };
        if let Some(slot) = histograms.get_mut(i).and_then(|h| h.get_mut(class)) {
            *slot += u64::try_from(n).unwrap_or(0);
        }
    }
    let read = |q| {
        histograms
            .iter()
            .map(|h| quantile(h, &LATENCY_BOUNDS_MS, q))
            .collect()
    };
    Ok(Latencies {
        p50: read(0.5),
        p99: read(0.99),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_end_with_the_one_that_holds_now() {
        let b = Buckets::ending_at(3_725_000, 60_000, 60);
        assert_eq!(
            b.end_ms(),
            3_780_000,
            "the current minute is the last bucket"
        );
        assert_eq!(b.start_ms, 180_000);
        assert_eq!(b.index(3_725_000), Some(59));
        assert_eq!(b.index(180_000), Some(0));
        assert_eq!(b.index(179_999), None);
        assert_eq!(b.index(3_780_000), None);
    }

    #[test]
    fn latency_bounds_rise_about_ten_a_decade() {
        let b = &*LATENCY_BOUNDS_MS;
        assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
        assert_eq!(b.first(), Some(&1));
        assert_eq!(b.last(), Some(&10_000_000));
        assert!(b.windows(2).skip(7).all(|w| w[1] * 3 <= w[0] * 4), "{b:?}");
    }

    #[test]
    fn a_quantile_is_the_bound_of_the_class_that_holds_its_rank() {
        let bounds = [10, 100, 1000];
        // 50 values under 10 ms, 49 under 100, 1 under 1000.
        let counts = [50, 49, 1, 0];
        assert_eq!(quantile(&counts, &bounds, 0.5), Some(10));
        assert_eq!(quantile(&counts, &bounds, 0.99), Some(100));
        assert_eq!(quantile(&counts, &bounds, 1.0), Some(1000));
        assert_eq!(
            quantile(&[0, 0, 0, 0], &bounds, 0.5),
            None,
            "nothing counted"
        );
        assert_eq!(
            quantile(&[0, 0, 0, 3], &bounds, 0.5),
            Some(1000),
            "past the last bound reads as the last bound"
        );
        assert_eq!(quantile(&[1, 0, 0, 0], &bounds, 0.01), Some(10));
    }
}
