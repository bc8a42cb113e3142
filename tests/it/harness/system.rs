//! The system each async test runs on: its teardown, and the engines the
//! test started, stopped while the runtime still runs.

use hookd::delivery::Engine;

thread_local! {
    static ENGINES: std::cell::RefCell<Vec<Engine>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs a test's body on its own actix system (`#[hookd_test_macros::test]`
/// calls it): the engines it started are stopped while the runtime still
/// runs, and the system is torn down where its tasks can still hand their
/// connections back, so a failing test fails alone instead of aborting the
/// suite. The body comes boxed: a large test future moved through the
/// runtime's frames by value would overflow the test thread's stack.
pub fn run(body: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>) {
    hookd::runtime::run(Box::pin(async {
        body.await;
        quiesce().await;
    }));
}

/// Stops the engines this test started while the runtime still runs, so no
/// database connection is dropped outside it.
pub async fn quiesce() {
    let engines: Vec<_> = ENGINES.with(|e| e.borrow_mut().drain(..).collect());
    for engine in engines {
        engine.shutdown().await;
    }
}

/// An engine the test started, to stop at its end.
pub fn started(engine: &Engine) {
    ENGINES.with(|e| e.borrow_mut().push(engine.clone()));
}
