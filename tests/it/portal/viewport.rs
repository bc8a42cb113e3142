//! What a portal page looks like at a given width, read in the browser:
//! the viewport set through the DevTools protocol
//! (`Emulation.setDeviceMetricsOverride`), whether the page scrolls
//! sideways, the table cells left empty, the buttons that touch, the times
//! that wrap.

use serde_json::{Value, json};

use crate::harness::browser::Page;

/// A phone's width, and a common laptop's.
pub const PHONE: u32 = 360;
pub const DESKTOP: u32 = 1366;

/// Shows the page as a screen `width` CSS pixels wide would (a phone's
/// is a touch screen).
pub async fn set_width(page: &mut Page, width: u32) {
    let metrics = json!({
        "width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600,
    });
    page.call("Emulation.setDeviceMetricsOverride", metrics)
        .await;
    // Let the new width take effect before anything is measured.
    page.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        .await;
}

/// Whether the page is wider than the window (it scrolls sideways).
pub async fn scrolls_sideways(page: &mut Page) -> bool {
    let js = "document.documentElement.scrollWidth > window.innerWidth";
    page.eval(js).await == Value::Bool(true)
}

/// Every table cell without text, as `table#id column n: row text`.
pub async fn empty_cells(page: &mut Page) -> Vec<String> {
    let js = r#"[...document.querySelectorAll('table tr')].flatMap(tr =>
        [...tr.children].map((td, i) => [td, i]).filter(([td]) =>
            td.tagName === 'TD' && !td.textContent.trim())
        .map(([td, i]) => (tr.closest('table').id || 'table') + ' column ' + (i + 1) + ': ' + tr.textContent.trim()))"#;
    strings(page.eval(js).await)
}

/// The headings of the table `selector`'s columns.
pub async fn columns(page: &mut Page, selector: &str) -> Vec<String> {
    let js = format!(
        "[...document.querySelectorAll({})].map(th => th.textContent.trim())",
        json!(format!("{selector} tr:first-child th"))
    );
    strings(page.eval(&js).await)
}

/// Pairs of buttons side by side (on one line) less than 6 px apart.
pub async fn buttons_that_touch(page: &mut Page) -> Vec<String> {
    let js = r#"(() => {
        const boxes = [...document.querySelectorAll('main button')]
            .map(b => [b.textContent.trim(), b.getBoundingClientRect()])
            .filter(([, r]) => r.width > 0);
        const touching = [];
        for (const [a, ra] of boxes) for (const [b, rb] of boxes) {
            const sameLine = Math.abs(ra.top - rb.top) < 4;
            const gap = rb.left - ra.right;
            if (a !== b && sameLine && gap >= 0 && gap < 6) touching.push(a + ' | ' + b);
        }
        return touching;
    })()"#;
    strings(page.eval(js).await)
}

/// The times shown on more than one line.
pub async fn wrapped_times(page: &mut Page) -> Vec<String> {
    let js = "[...document.querySelectorAll('time')].filter(t => t.getClientRects().length > 1).map(t => t.textContent)";
    strings(page.eval(js).await)
}

/// Every `time` element's text and tooltip.
pub async fn times(page: &mut Page) -> Vec<(String, String)> {
    let js = "[...document.querySelectorAll('time')].map(t => [t.textContent, t.title || ''])";
    let shown = page.eval(js).await;
    shown
        .as_array()
        .map(|all| {
            all.iter()
                .map(|p| {
                    let part = |i: usize| p[i].as_str().unwrap_or_default().to_string();
                    (part(0), part(1))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn strings(v: Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// With `HOOKD_SCREENSHOTS=1` (on SQLite, as `docs_screenshot`), writes the
/// page as a phone shows it, 360 CSS pixels wide, to
/// `docs/screenshots/<name>.png`.
pub async fn phone_screenshot(page: &mut Page, backend: crate::harness::Backend, name: &str) {
    use base64::Engine as _;
    if backend != crate::harness::Backend::Sqlite
        || std::env::var("HOOKD_SCREENSHOTS").as_deref() != Ok("1")
    {
        return;
    }
    set_width(page, PHONE).await;
    let height = page.eval("document.documentElement.scrollHeight").await;
    let height = height.as_f64().unwrap_or(800.0).min(8000.0);
    let clip = json!({"x": 0, "y": 0, "width": PHONE, "height": height, "scale": 2});
    let params = json!({"format": "png", "captureBeyondViewport": true, "clip": clip});
    let shot = page.call("Page.captureScreenshot", params).await;
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().expect("a screenshot's data"))
        .expect("a screenshot is base64");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/screenshots")
        .join(format!("{name}.png"));
    std::fs::write(path, png).expect("the screenshot is written");
}
