//! The request timeout of an attempt, fair to a process that was paused.
//!
//! A process stopped (SIGSTOP, a frozen VM, a starved runtime) wakes with
//! its timers long past due and the receiver's answer, which arrived while
//! it slept, waiting in the socket. Whichever is looked at first wins; a
//! plain timeout can record an answer received in 200 ms as a 30-second
//! timeout. Here the attempt is always polled before its deadline, and a
//! deadline found badly overslept gets one short grace, so what is already
//! in the socket is read.

use std::{
    future::Future,
    time::{Duration, Instant},
};

/// A deadline noticed this late was overslept: the process was not running.
pub const OVERSLEPT: Duration = Duration::from_millis(500);

/// How long an overslept deadline waits more for what is already there.
pub const GRACE: Duration = Duration::from_millis(250);

/// The deadline has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

/// What a deadline that fired `late` after it was due means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    TimedOut,
    /// Look once more, until this much later.
    Grace(Duration),
}

/// Decides a fired deadline: overslept, and not graced already, it waits
/// `GRACE` more; otherwise the attempt timed out.
pub fn verdict(late: Duration, graced: bool) -> Verdict {
    if late >= OVERSLEPT && !graced {
        Verdict::Grace(GRACE)
    } else {
        Verdict::TimedOut
    }
}

/// `fut`'s output, unless `deadline` passes first (see `verdict`).
pub async fn within<F: Future>(deadline: Instant, fut: F) -> Result<F::Output, Elapsed> {
    let mut fut = std::pin::pin!(fut);
    let (mut deadline, mut graced) = (deadline, false);
    loop {
        tokio::select! {
            biased;
            out = &mut fut => return Ok(out),
            () = tokio::time::sleep_until(deadline.into()) => {
                let late = Instant::now().saturating_duration_since(deadline);
                match verdict(late, graced) {
                    Verdict::TimedOut => return Err(Elapsed),
                    Verdict::Grace(more) => {
                        graced = true;
                        deadline = Instant::now() + more;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_met_on_time_is_a_timeout() {
        assert_eq!(verdict(Duration::ZERO, false), Verdict::TimedOut);
        assert_eq!(verdict(Duration::from_millis(20), false), Verdict::TimedOut);
    }

    #[test]
    fn an_overslept_deadline_gets_one_grace_and_no_more() {
        assert_eq!(
            verdict(Duration::from_secs(30), false),
            Verdict::Grace(GRACE)
        );
        assert_eq!(verdict(Duration::from_secs(30), true), Verdict::TimedOut);
    }

    #[actix_rt::test]
    async fn what_is_ready_wins_over_a_deadline_already_past() {
        let past = Instant::now() - Duration::from_secs(5);
        assert_eq!(within(past, async { 7 }).await, Ok(7));
    }

    #[actix_rt::test]
    async fn an_answer_that_never_comes_times_out_after_the_grace() {
        let past = Instant::now() - Duration::from_secs(5);
        let started = Instant::now();
        let never = std::future::pending::<()>();
        assert_eq!(within(past, never).await, Err(Elapsed));
        assert!(
            started.elapsed() >= GRACE,
            "the overslept deadline waited its grace"
        );
    }
}
