//! The partner portal in a real browser (headless Chromium) and over plain
//! HTTP: signing in with a partner key or a one-time link (`sign_in`),
//! seeing only the partner's own objects (another partner's id is a 404
//! page) and managing endpoints, secrets and the notification channel
//! (`pages`), an endpoint's receiver credentials and v1a keys
//! (`credentials`), its ordering, filter and held subjects (`routing`), and
//! the rules of the dashboard: cookies, CSP, CSRF, the cross-site check,
//! the sealed outcome of an action (`rules`); every page with real data at
//! a phone's width and a desktop's (`tour`, measured with `viewport`) and
//! Post/Redirect/Get after every action, refusals inside the page (`prg`).

/// A portal test on both backends given hookd, a partner key and a tab
/// signed in with it (`signed_in_portal`):
/// `signed_in_test!(name, |app, key, page, backend| { … })`; it passes
/// without running when browser tests are skipped.
macro_rules! signed_in_test {
    ($name:ident, |$app:ident, $key:ident, $page:ident, $backend:ident| $body:block) => {
        $crate::on_both_backends!($name, |$backend: $crate::harness::Backend| async move {
            let Some($crate::portal::SignedIn {
                app: $app,
                key: $key,
                browser: _browser,
                page: mut $page,
            }) = $crate::portal::signed_in_portal($backend).await
            else {
                return;
            };
            $body
        });
    };
}

mod credentials;
mod incidents;
mod pages;
mod prg;
mod routing;
mod rules;
mod sign_in;
mod tour;
mod viewport;

use serde_json::json;

use crate::harness::{
    Backend, TestApp,
    browser::{Browser, Page},
    browser_app::app_and_browser,
};

fn sign_in_with(key: &str) -> String {
    format!(
        "document.querySelector('#key').value = {}; document.querySelector('form').submit()",
        json!(key)
    )
}

/// A script that fills the fields (`#id` → value).
fn fill(fields: &[(&str, &str)]) -> String {
    let mut js = String::new();
    for (id, value) in fields {
        js.push_str(&format!(
            "document.querySelector({}).value = {};",
            json!(format!("#{id}")),
            json!(value)
        ));
    }
    js
}

/// Fills the fields (`#id` → value) and submits the form of `form`.
pub fn submit(form: &str, fields: &[(&str, &str)]) -> String {
    format!(
        "{}document.querySelector({}).submit()",
        fill(fields),
        json!(form)
    )
}

/// Fills the fields and clicks the button `button`, which posts its form
/// (to its own `formaction`, if it has one).
pub fn click(button: &str, fields: &[(&str, &str)]) -> String {
    format!(
        "{}document.querySelector({}).click()",
        fill(fields),
        json!(button)
    )
}

/// The text of the first element matching `selector` (empty if none).
pub async fn text(page: &mut Page, selector: &str) -> String {
    let js = format!(
        "(document.querySelector({}) || {{textContent: ''}}).textContent",
        json!(selector)
    );
    page.eval(&js)
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A tab signed in to the portal with `key` (checked: signed out, the
/// portal asks to sign in; the key signs in).
pub async fn signed_in_page(app: &TestApp, browser: &Browser, key: &str) -> Page {
    let mut page = browser.page().await;
    page.goto(&format!("{}/portal", app.base_url)).await;
    assert_eq!(
        page.path().await,
        "/portal/login",
        "signed out, the portal asks to sign in"
    );
    page.navigate_by(&sign_in_with(key)).await;
    assert_eq!(page.path().await, "/portal", "the partner key signs in");
    page
}

/// hookd on the defaults, a partner key, and a browser tab signed in with
/// it to the portal.
pub struct SignedIn {
    pub app: TestApp,
    pub key: String,
    pub browser: Browser,
    pub page: Page,
}

/// A `SignedIn` portal tab; `None` when browser tests are skipped.
pub async fn signed_in_portal(backend: Backend) -> Option<SignedIn> {
    let (app, browser) = app_and_browser(backend).await?;
    let key = app.partner_key().await;
    let page = signed_in_page(&app, &browser, &key).await;
    Some(SignedIn {
        app,
        key,
        browser,
        page,
    })
}

/// Opens `path` of the portal.
pub async fn open(page: &mut Page, app: &TestApp, path: &str) {
    page.goto(&format!("{}{path}", app.base_url)).await;
}
