//! The actix system a command runs on, and its teardown.
//!
//! When a system is dropped, the tasks still on it (an actor between two
//! statements, a request half sent) are dropped too. A task holding a pooled
//! database connection hands it back by spawning onto the runtime, which
//! panics outside a runtime's context; actix drops its tasks outside that
//! context, and a panic there while a test is already failing aborts the whole
//! process. [`run`] drops the system inside its runtime's context instead, on
//! success and on panic alike.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// Runs `work` to its end on a new actix system, then tears the system down
/// with its runtime's context entered, so every task dropped at teardown can
/// still spawn its clean-up. A panic in `work` goes on once the system is down.
pub fn run<F: Future>(work: F) -> F::Output {
    let system = actix_rt::System::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| system.block_on(work)));
    let handle = system.runtime().tokio_runtime().handle().clone();
    {
        let _inside = handle.enter();
        drop(system);
    }
    outcome.unwrap_or_else(|panic| resume_unwind(panic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Stands for a pooled connection: dropping it spawns its hand-back,
    /// and counts the hand-backs that found a runtime to go to.
    struct SpawnsOnDrop(Arc<AtomicUsize>);

    impl Drop for SpawnsOnDrop {
        fn drop(&mut self) {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                drop(runtime.spawn(async {}));
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// Leaves a task running that holds a connection, as an actor between
    /// two statements does.
    fn a_task_holding_a_connection(handed_back: &Arc<AtomicUsize>) {
        let held = SpawnsOnDrop(handed_back.clone());
        actix_rt::spawn(async move {
            let _held = held;
            std::future::pending::<()>().await;
        });
    }

    #[test]
    fn a_task_left_running_hands_its_connection_back_at_teardown() {
        let handed_back = Arc::new(AtomicUsize::new(0));
        let answer = run(async {
            a_task_holding_a_connection(&handed_back);
            actix_rt::task::yield_now().await;
            42
        });
        assert_eq!(answer, 42, "the work's output comes back");
        assert_eq!(
            handed_back.load(Ordering::SeqCst),
            1,
            "the task dropped at teardown found the runtime to spawn on"
        );
    }

    #[test]
    fn a_panic_in_the_work_goes_on_after_a_clean_teardown() {
        let handed_back = Arc::new(AtomicUsize::new(0));
        let outcome = catch_unwind(|| {
            run(async {
                a_task_holding_a_connection(&handed_back);
                actix_rt::task::yield_now().await;
                panic!("the work fails");
            })
        });
        let panic = outcome.expect_err("the work's panic reaches the caller");
        assert_eq!(
            panic.downcast_ref::<&str>(),
            Some(&"the work fails"),
            "the work's own panic comes back"
        );
        assert_eq!(
            handed_back.load(Ordering::SeqCst),
            1,
            "the task dropped at teardown found the runtime to spawn on"
        );
    }
}
