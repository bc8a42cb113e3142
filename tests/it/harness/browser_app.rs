//! The start of every browser test: hookd on the defaults and a headless
//! browser, or nothing when browser tests are skipped.

use super::{
    Backend, TestApp,
    browser::{Browser, skip_browser},
    spawn_app,
};

/// hookd on the defaults and a launched browser; `None` when browser tests
/// are skipped (`HOOKD_TEST_BROWSER=skip`, loudly, and never under `CI=true`).
pub async fn app_and_browser(backend: Backend) -> Option<(TestApp, Browser)> {
    if skip_browser() {
        return None;
    }
    let app = spawn_app(backend).await;
    Some((app, Browser::launch().await))
}
