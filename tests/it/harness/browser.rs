//! A real Chromium, headless, driven over the DevTools protocol (a WebSocket
//! from awc): tests load pages, fill forms and read the DOM as a user's
//! browser would, cookies and redirects included.
//!
//! Chromium is found as `HOOKD_TEST_CHROMIUM`, or `chromium`,
//! `chromium-browser` or `google-chrome` on `PATH` (`apt-get install
//! chromium`). Without one the browser tests fail with that advice, unless
//! `HOOKD_TEST_BROWSER=skip`.

use std::{path::PathBuf, process::Stdio, time::Duration};

use actix_codec::Framed;
use awc::{BoxedSocket, ws};
use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};

use crate::harness::SLOW;

/// Whether browser tests are switched off (`HOOKD_TEST_BROWSER=skip`),
/// said loudly; under `CI=true` the test fails instead.
pub fn skip_browser() -> bool {
    std::env::var("HOOKD_TEST_BROWSER").is_ok_and(|v| v == "skip")
        && super::skip::skipping("a browser test", "HOOKD_TEST_BROWSER=skip")
}

fn chromium() -> PathBuf {
    if let Ok(path) = std::env::var("HOOKD_TEST_CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "the dashboard tests need Chromium: `apt-get install chromium`, or set \
         HOOKD_TEST_CHROMIUM to a Chrome binary (HOOKD_TEST_BROWSER=skip skips them)"
    );
}

pub struct Browser {
    child: std::process::Child,
    port: u16,
    http: awc::Client,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    pub async fn launch() -> Browser {
        let profile = tempfile::tempdir().expect("a profile directory");
        let child = std::process::Command::new(chromium())
            .args([
                "--headless=new",
                // Tests run as root in CI, where Chromium's sandbox cannot start.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Chromium starts");
        // Chromium writes its DevTools port into the profile once it listens.
        let port_file = profile.path().join("DevToolsActivePort");
        let port = crate::harness::wait_until(SLOW, || {
            let port_file = port_file.clone();
            async move {
                let text = std::fs::read_to_string(port_file).ok()?;
                text.lines().next()?.trim().parse::<u16>().ok()
            }
        })
        .await
        .expect("Chromium opens its DevTools port");
        Browser {
            child,
            port,
            http: awc::Client::builder().timeout(SLOW).finish(),
            _profile: profile,
        }
    }

    /// A new tab.
    pub async fn page(&self) -> Page {
        let mut res = self
            .http
            .put(format!(
                "http://127.0.0.1:{}/json/new?about:blank",
                self.port
            ))
            .send()
            .await
            .expect("DevTools opens a tab");
        let target: Value = res.json().await.expect("the new tab's description");
        let url = target["webSocketDebuggerUrl"]
            .as_str()
            .expect("a tab has a DevTools WebSocket")
            .to_string();
        let (_, socket) = self
            .http
            .ws(url)
            .max_frame_size(16 * 1024 * 1024)
            .connect()
            .await
            .expect("the tab's DevTools WebSocket connects");
        let mut page = Page { socket, next_id: 0 };
        page.call("Page.enable", json!({})).await;
        page
    }
}

pub struct Page {
    socket: Framed<BoxedSocket, ws::Codec>,
    next_id: u64,
}

impl Page {
    /// One DevTools command and its result (events in between are skipped).
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        match self.try_call(method, params).await {
            Ok(result) => result,
            Err(error) => panic!("DevTools {method} failed: {error}"),
        }
    }

    /// One DevTools command: its result, or the error DevTools answered.
    async fn try_call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        let command = json!({"id": id, "method": method, "params": params}).to_string();
        self.socket
            .send(ws::Message::Text(command.into()))
            .await
            .expect("a DevTools command is sent");
        loop {
            let frame = actix_rt::time::timeout(SLOW, self.socket.next())
                .await
                .unwrap_or_else(|_| panic!("DevTools did not answer {method}"))
                .expect("the DevTools socket stays open")
                .expect("a DevTools frame");
            let ws::Frame::Text(text) = frame else {
                continue;
            };
            let message: Value = serde_json::from_slice(&text).expect("DevTools speaks JSON");
            if message["id"] == id {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
            }
        }
    }

    /// Evaluates `js` in the page (awaiting a promise) and returns its value.
    pub async fn eval(&mut self, js: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        if let Some(e) = result.get("exceptionDetails") {
            panic!("the page threw on `{js}`: {e}");
        }
        result["result"]["value"].clone()
    }

    /// Loads `url` and waits until the document it ends up at (after
    /// redirects) has loaded.
    pub async fn goto(&mut self, url: &str) {
        self.mark().await;
        self.call("Page.navigate", json!({"url": url})).await;
        self.new_document().await;
    }

    /// Runs `js`, which navigates (say, submits a form), and waits for the
    /// next document to load.
    pub async fn navigate_by(&mut self, js: &str) {
        self.mark().await;
        self.eval(js).await;
        self.new_document().await;
    }

    /// The path of the document shown.
    pub async fn path(&mut self) -> String {
        self.eval("location.pathname")
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Writes a PNG of the whole page, 1280 CSS pixels wide, to `path`
    /// (its folder is made if missing).
    pub async fn screenshot(&mut self, path: &std::path::Path) {
        use base64::Engine as _;
        let viewport =
            json!({"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false});
        self.call("Emulation.setDeviceMetricsOverride", viewport)
            .await;
        let metrics = self.call("Page.getLayoutMetrics", json!({})).await;
        let size = &metrics["cssContentSize"];
        let height = size["height"].as_f64().unwrap_or(900.0).min(8000.0);
        let clip = json!({"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1});
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true, "clip": clip}),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("a screenshot's data"))
            .expect("a screenshot is base64");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("the screenshot's folder");
        }
        std::fs::write(path, png).expect("the screenshot is written");
    }

    /// Marks the current document, so a new one can be told apart even at
    /// the same URL.
    async fn mark(&mut self) {
        self.eval("window.hookdOldDocument = true").await;
    }

    /// Waits until a document without the mark has loaded. A look taken
    /// while the old document is being replaced is answered "navigated or
    /// closed": that is "not yet".
    async fn new_document(&mut self) {
        let deadline = std::time::Instant::now() + SLOW;
        let js = "!window.hookdOldDocument && document.readyState === 'complete'";
        let params = json!({"expression": js, "returnByValue": true});
        while !self
            .try_call("Runtime.evaluate", params.clone())
            .await
            .is_ok_and(|r| r["result"]["value"] == true)
        {
            assert!(
                std::time::Instant::now() < deadline,
                "no new document loaded"
            );
            actix_rt::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// With `HOOKD_SCREENSHOTS=1`, writes the page to
/// `docs/screenshots/<name>.png` for the docs (from the SQLite run only,
/// so the two backends never write one file at once). CI leaves it unset
/// and the tree clean.
pub async fn docs_screenshot(page: &mut Page, backend: crate::harness::Backend, name: &str) {
    if backend != crate::harness::Backend::Sqlite
        || std::env::var("HOOKD_SCREENSHOTS").as_deref() != Ok("1")
    {
        return;
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/screenshots")
        .join(format!("{name}.png"));
    page.screenshot(&path).await;
}
