//! Every wait in the tests: the timeouts in one place, one way to poll until
//! something holds, one way to check that nothing happens.

use std::{future::Future, time::Duration};

/// How long one step of the engine may take: a poll (50 ms in tests), a
/// claim, an attempt against a loopback receiver, a database round trip.
pub const WAIT: Duration = Duration::from_secs(10);

/// How long something outside this process may take: a child `hookd`, a
/// toolchain building an example receiver, a browser, a PostgreSQL restart.
pub const SLOW: Duration = Duration::from_secs(60);

/// How soon `/readyz` must answer while the database is down: its own check
/// gives up after 0.9 s, and a check that waited on the pool instead would
/// take the pool's 2 s acquire timeout; the rest is room for a loaded
/// machine's scheduling.
pub const READY_ANSWER_WITHIN: Duration = Duration::from_millis(1900);

/// How long "nothing happens" is watched: several of the engine's 50 ms polls.
pub const QUIET: Duration = Duration::from_millis(300);

/// How often `wait_until` and `stays_quiet` look.
const TICK: Duration = Duration::from_millis(20);

/// Polls `app`'s `count` (a `SELECT COUNT(*) AS n …`) until it is 0, or
/// `timeout` passes; whether it got there.
pub async fn until_none(app: &super::TestApp, count: &str, timeout: Duration) -> bool {
    wait_until(timeout, || async {
        (app.count(count).await == 0).then_some(())
    })
    .await
    .is_some()
}

/// Polls `f` until it gives `Some`, or `timeout` passes.
pub async fn wait_until<T, F, Fut>(timeout: Duration, mut f: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return Some(v);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        actix_rt::time::sleep(TICK).await;
    }
}

/// Watches `f` for `duration` and panics with what it reports the first
/// time it reports something: the check that a thing does *not* happen.
pub async fn stays_quiet<F, Fut>(duration: Duration, f: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<String>>,
{
    if let Some(what) = wait_until(duration, f).await {
        panic!("expected nothing to happen for {duration:?}, but {what}");
    }
}

/// Like `wait_until`, for what must come: panics with `failed()` and
/// "within `timeout`" when `timeout` passes first.
pub async fn wait_for<T, F, Fut>(timeout: Duration, f: F, failed: impl FnOnce() -> String) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    wait_until(timeout, f)
        .await
        .unwrap_or_else(|| panic!("{} within {timeout:?}", failed()))
}
