//! The operator dashboard, mostly in a real browser (headless Chromium):
//!
//! - `sign_in`: signing in and out, the cross-site check, revocation;
//! - `headers`: the security headers on every answer and the session
//!   cookie's attributes;
//! - `pages`: each page shows what it names (overview charts, endpoints
//!   filtered, an endpoint's attempts, a delivery's attempts, search);
//! - `actions`: replay, disable, enable and recover from their forms, each
//!   with one audit entry via the dashboard;
//! - `refusals`: posts without the session's CSRF token or from another
//!   site, unknown ids, signed-out browsers;
//! - `credentials`: an endpoint's receiver credentials and signing
//!   schemes shown by name, never a secret;
//! - `routing`: an endpoint's ordering and filter (escaped), and a subject
//!   held by its dead head, skipped or replayed from the page;
//! - `samples`: the per-minute backlog sample the charts draw;
//! - `glance`: cards that follow the partner filter, relative times, the
//!   measured attempt average, and tables that page both ways;
//! - `parity`: an endpoint's status and circuit read the same on every page;
//! - `event`: an event's page (payload as stored and as each version was
//!   sent, its deliveries) and the links to it;
//! - `secrets`: secret rotation (shown once) and test send from the
//!   endpoint page, each audited;
//! - `fit`: no page scrolls sideways on a 1366×768 screen with long data.
//!
//! With `HOOKD_SCREENSHOTS=1` the SQLite runs of the browser tests write
//! `docs/screenshots/dashboard-<page>.png` for docs/dashboard.md.

/// A dashboard test in a real browser, on both backends (as
/// `on_both_backends!`), that passes without running when browser tests are
/// switched off (`skip_browser`, which fails under `CI=true`). The body is
/// one of:
/// - `|app: TestApp| async move { … }`: given an app on the defaults;
/// - `|backend: Backend| async move { … }`: it starts its own;
/// - `as_operator, |app, page| { … }`: given an app on the defaults and a
///   tab signed in to it with an operator key (`signed_in`);
/// - `at(|w| path), |w, page, backend| { … }`: given the operator views'
///   world and a tab signed in as its operator, open at `path` (`world_at`);
/// - `from(opener), |w, page, backend| { … }`: the same from `opener(backend)`,
///   a function like `world_at` that opens something else first.
macro_rules! browser_test {
    ($name:ident, |$app:ident : TestApp| async move $body:block) => {
        browser_test!($name, |backend: Backend| async move {
            let $app = $crate::harness::spawn_app(backend).await;
            $body
        });
    };
    ($name:ident, |$backend:ident : Backend| async move $body:block) => {
        $crate::on_both_backends!($name, |$backend: $crate::harness::Backend| async move {
            if $crate::harness::browser::skip_browser() {
                return;
            }
            $body
        });
    };
    ($name:ident, as_operator, |$app:ident, $page:ident| $body:block) => {
        browser_test!($name, |$app: TestApp| async move {
            let operator = $app.operator_key().await;
            let (_browser, mut $page) = $crate::dashboard::signed_in(&$app, &operator).await;
            $body
        });
    };
    ($name:ident, at($at:expr), |$w:ident, $page:ident, $backend:ident| $body:block) => {
        $crate::on_both_backends!($name, |$backend: $crate::harness::Backend| async move {
            let opened = $crate::dashboard::world_at($backend, &[], $at).await;
            let Some(($w, _browser, mut $page)) = opened else {
                return;
            };
            $body
        });
    };
    ($name:ident, from($opener:path), |$w:ident, $page:ident, $backend:ident| $body:block) => {
        $crate::on_both_backends!($name, |$backend: $crate::harness::Backend| async move {
            let Some(($w, _browser, mut $page)) = $opener($backend).await else {
                return;
            };
            $body
        });
    };
}

mod actions;
mod credentials;
mod event;
mod fit;
mod glance;
mod headers;
mod pages;
mod parity;
mod refusals;
mod routing;
mod samples;
mod secrets;
mod sign_in;

use hookd::store::audit::{self, AuditFilter, Recorded};
use serde_json::{Value, json};

use crate::admin_views::{World, world};
use crate::harness::{
    Backend, TestApp,
    browser::{Browser, Page, skip_browser},
};

/// A browser tab signed in to the dashboard with `key`.
pub async fn signed_in(app: &TestApp, key: &str) -> (Browser, Page) {
    let browser = Browser::launch().await;
    let mut page = browser.page().await;
    page.goto(&format!("{}/dashboard/login", app.base_url))
        .await;
    page.navigate_by(&sign_in::sign_in_with(key)).await;
    assert_eq!(page.path().await, "/dashboard", "the operator key signs in");
    (browser, page)
}

/// The operator views' world (two partners, three endpoints, three
/// deliveries; see `admin_views::World`) with a browser tab signed in as
/// its operator and open at the path `at` names; `None` when browser tests
/// are switched off.
pub async fn world_at(
    backend: Backend,
    extra: &[(&str, &str)],
    at: impl Fn(&World) -> String,
) -> Option<(World, Browser, Page)> {
    if skip_browser() {
        return None;
    }
    let w = world(backend, extra).await;
    let (browser, mut page) = signed_in(&w.app, &w.operator).await;
    open(&mut page, &w.app, &at(&w)).await;
    Some((w, browser, page))
}

/// Opens `path` of the dashboard.
pub async fn open(page: &mut Page, app: &TestApp, path: &str) {
    page.goto(&format!("{}{path}", app.base_url)).await;
}

/// Opens the dashboard page of the endpoint `ep`.
pub async fn open_endpoint(page: &mut Page, app: &TestApp, ep: &str) {
    open(page, app, &format!("/dashboard/endpoints/{ep}")).await;
}

/// Clicks the element `selector` and waits for the page it leads to.
pub async fn click(page: &mut Page, selector: &str) {
    let js = format!("document.querySelector({}).click()", json!(selector));
    page.navigate_by(&js).await;
}

/// Submits the form `#id` (after `fill`, a script that fills its fields)
/// and waits for the page it leads to.
pub async fn submit(page: &mut Page, id: &str, fill: &str) {
    let js = format!(
        "{fill}; document.querySelector({}).submit()",
        json!(format!("form#{id}"))
    );
    page.navigate_by(&js).await;
}

/// The text of each element matching `selector`, trimmed.
pub async fn texts(page: &mut Page, selector: &str) -> Vec<String> {
    let js = format!(
        "[...document.querySelectorAll({})].map(e => e.textContent.trim())",
        json!(selector)
    );
    let got = page.eval(&js).await;
    got.as_array()
        .unwrap_or_else(|| panic!("a list for {selector}: {got}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// The value of `attribute` on each element matching `selector`.
pub async fn attributes(page: &mut Page, selector: &str, attribute: &str) -> Vec<String> {
    let js = format!(
        "[...document.querySelectorAll({})].map(e => e.getAttribute({}))",
        json!(selector),
        json!(attribute)
    );
    let got: Value = page.eval(&js).await;
    got.as_array()
        .unwrap_or_else(|| panic!("a list for {selector}: {got}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// With `HOOKD_SCREENSHOTS=1`, writes the page to
/// `docs/screenshots/dashboard-<name>.png` (see `docs_screenshot`).
pub async fn screenshot(page: &mut Page, backend: Backend, name: &str) {
    crate::harness::browser::docs_screenshot(page, backend, &format!("dashboard-{name}")).await;
}

/// The part of `page` after `from` up to the first `to` after it: one
/// element of a page read as text.
#[track_caller]
pub fn part_of<'a>(page: &'a str, from: &str, to: &str) -> &'a str {
    page.split(from)
        .nth(1)
        .and_then(|rest| rest.split(to).next())
        .unwrap_or_else(|| panic!("no `{from}` … `{to}` in {page}"))
}

/// Every audit entry, newest first.
pub async fn audit_entries(app: &TestApp) -> Vec<Recorded> {
    audit::list(app.db(), &AuditFilter::default(), None, 100)
        .await
        .expect("the audit log reads")
}

/// The only audit entry, which must be `action` on `target` by the key
/// `key_id` through the dashboard from the test's address.
#[track_caller]
pub fn assert_one_dashboard_entry(entries: &[Recorded], action: &str, target: &str, key_id: &str) {
    assert_eq!(entries.len(), 1, "exactly one audit entry: {entries:?}");
    let e = &entries[0];
    assert_eq!(
        (e.action.as_str(), e.target.as_str()),
        (action, target),
        "{e:?}"
    );
    assert_eq!(
        e.via, "dashboard",
        "written as done through the dashboard: {e:?}"
    );
    assert_eq!(e.key_id, key_id, "by the signed-in key: {e:?}");
    assert_eq!(
        e.remote_addr, "127.0.0.1",
        "from the browser's address: {e:?}"
    );
}
