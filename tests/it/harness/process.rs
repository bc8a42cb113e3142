//! The `hookd` binary as a child process, the one way tests start it: with
//! only the environment a test gives it (and PATH), run to its end
//! (`run`, `run_off_runtime`) or kept running (`Hookd`, killed when dropped).

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Output, Stdio},
    time::{Duration, Instant},
};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_hookd");

/// `hookd <args>` with only `env` and PATH as its environment, not yet started.
pub fn command<K, V>(args: &[&str], env: impl IntoIterator<Item = (K, V)>) -> Command
where
    K: AsRef<std::ffi::OsStr>,
    V: AsRef<std::ffi::OsStr>,
{
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env);
    command
}

/// `hookd <args>` with only `env` (and PATH) as its environment, run to its end.
pub fn run(env: &[(String, String)], args: &[&str]) -> Output {
    command(args, env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("the hookd binary runs")
}

/// Like `run`, off the test's runtime, so a receiver or a server in this
/// process keeps answering meanwhile.
pub async fn run_off_runtime(env: Vec<(String, String)>, args: Vec<String>) -> Output {
    actix_rt::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&env, &args)
    })
    .await
    .expect("the hookd child finished")
}

/// How often the exit waits look at the process.
const EXIT_POLL: Duration = Duration::from_millis(20);

/// The last part of a long log (a child's stderr), for assertion messages.
pub fn log_tail(text: &str) -> &str {
    let start = text.len().saturating_sub(3000);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

pub use super::ports::free_port;

/// A `hookd` child process; dropping it kills it, so no test leaves one behind.
pub struct Hookd {
    child: Child,
    stderr_path: PathBuf,
}

impl Hookd {
    /// Starts `hookd <args>` with only `env` as its environment; its stderr goes
    /// to `<dir>/<name>.stderr`.
    pub fn start(args: &[&str], env: &[(String, String)], dir: &Path, name: &str) -> Hookd {
        Hookd::spawn(command(args, env.iter().map(|(k, v)| (k, v))), dir, name)
    }

    /// Like `start`, with the file limit (soft and hard) lowered to `files`.
    pub fn start_with_file_limit(
        files: u64,
        args: &[&str],
        env: &[(String, String)],
        dir: &Path,
        name: &str,
    ) -> Hookd {
        let command = command(args, env.iter().map(|(k, v)| (k, v)));
        let hookd = command.get_program().to_owned();
        let args: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
        let mut limited = Command::new("/bin/sh");
        limited
            .arg("-c")
            .arg(format!("ulimit -n {files} && exec \"$0\" \"$@\""))
            .arg(hookd)
            .args(args)
            .env_clear()
            .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))));
        Hookd::spawn(limited, dir, name)
    }

    fn spawn(mut command: Command, dir: &Path, name: &str) -> Hookd {
        let stderr_path = dir.join(format!("{name}.stderr"));
        let stderr = File::create(&stderr_path).expect("a file for hookd's stderr");
        let child = command
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("the hookd binary starts");
        Hookd { child, stderr_path }
    }

    /// SIGKILL, and reap the process.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory of the process, in KiB (Linux).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// Open file descriptors of the process (Linux).
    pub fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Waits until the process exits (polling, at most `timeout`).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.exit_by(deadline) {
                Some(exit) => return exit,
                None => std::thread::sleep(EXIT_POLL),
            }
        }
    }

    /// Like `wait_exit`, without blocking the test's runtime (a receiver in
    /// this process keeps answering meanwhile).
    pub async fn exited(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.exit_by(deadline) {
                Some(exit) => return exit,
                None => actix_rt::time::sleep(EXIT_POLL).await,
            }
        }
    }

    /// One look at the process for the exit waits: `Some(Some(status))`
    /// once it has exited, `Some(None)` once `deadline` has passed, `None`
    /// to look again.
    fn exit_by(&mut self, deadline: Instant) -> Option<Option<ExitStatus>> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(Some(status));
        }
        (Instant::now() > deadline).then_some(None)
    }

    /// Waits until `GET /healthz` answers 200; panics if the process exits or
    /// `timeout` passes first.
    pub async fn wait_healthy(&mut self, http: &awc::Client, base_url: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "hookd exited ({status}) before it was healthy; stderr:\n{}",
                    self.stderr()
                );
            }
            if healthy(http, base_url).await {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "hookd did not answer /healthz within {timeout:?}; stderr:\n{}",
                self.stderr()
            );
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Hookd {
    fn drop(&mut self) {
        self.kill();
    }
}

pub async fn healthy(http: &awc::Client, base_url: &str) -> bool {
    let request = http
        .get(format!("{base_url}/healthz"))
        .timeout(Duration::from_secs(1))
        .send();
    matches!(request.await, Ok(res) if res.status().as_u16() == 200)
}

/// Sends `kill -<name>` (`TERM`, `STOP`, `CONT`, ...) to the process.
pub fn signal(hookd: &Hookd, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(hookd.pid().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} was delivered");
}

/// For a hookd child on `url`: the database migrated, with a partner, a
/// service key and one endpoint at `receiver_url` (`/hooks`) taking
/// `concurrency` requests at once. Returns (partner id, service key).
pub async fn prepare_store(url: &str, receiver_url: &str, concurrency: u32) -> (String, String) {
    let prepared = prepare_endpoints(url, &[format!("{receiver_url}/hooks")], concurrency).await;
    (prepared.partner_id, prepared.service_key)
}

/// What `prepare_endpoints` made.
pub struct Prepared {
    pub partner_id: String,
    pub service_key: String,
    pub operator_key: String,
    /// The partner's own key (the Partner API).
    pub partner_key: String,
    /// In the order of the URLs given.
    pub endpoint_ids: Vec<String>,
}

/// For hookd children on `url`: the database migrated, with a partner, a
/// service key, an operator key and an endpoint of the partner at each of
/// `endpoint_urls`, each taking `concurrency` requests at once.
pub async fn prepare_endpoints(url: &str, endpoint_urls: &[String], concurrency: u32) -> Prepared {
    use hookd::{
        config::Config,
        secret::SecretBox,
        store::{
            self,
            endpoints::{EndpointStatus, NewEndpoint},
            keys::Role,
        },
    };
    let config = Config::load(None, super::test_env(url, &[])).expect("a valid configuration");
    let db = store::connect(&config.database)
        .await
        .expect("the database");
    store::migrate(&db).await.expect("migrated");
    let now = chrono::Utc::now().timestamp_millis();
    let partner = store::partners::create(&db, None, "Acme", now)
        .await
        .expect("a partner");
    let key = |role| store::keys::create(&db, role, None, now);
    let service_key = key(Role::Service).await.expect("a service key").key;
    let operator_key = key(Role::Operator).await.expect("an operator key").key;
    let partner_key = store::keys::create(&db, Role::Partner, Some(&partner.id), now)
        .await
        .expect("a partner key")
        .key;
    let secrets = SecretBox::from_passphrase(super::MASTER_KEY).expect("the test master key");
    let mut endpoint_ids = Vec::new();
    for endpoint_url in endpoint_urls {
        let endpoint = NewEndpoint {
            partner_id: partner.id.clone(),
            url: endpoint_url.clone(),
            description: String::new(),
            event_types: Vec::new(),
            concurrency,
            rate_limit: None,
            schema_version: None,
            schema_versions: Default::default(),
            status: EndpointStatus::Active,
            ordering: Default::default(),
            on_dead: Default::default(),
            filter: None,
        };
        let (endpoint, _) =
            store::endpoints::create(&db, &secrets, endpoint, hookd::signing::Scheme::V1, now)
                .await
                .expect("an endpoint");
        endpoint_ids.push(endpoint.id);
    }
    db.close().await.expect("the preparing pool closes");
    Prepared {
        partner_id: partner.id,
        service_key,
        operator_key,
        partner_key,
        endpoint_ids,
    }
}

/// `n` events of the partner with fresh ids: their ids, and the JSON array
/// to POST to `/v1/events`.
pub fn event_batch(partner_id: &str, n: usize) -> (Vec<String>, String) {
    let ids: Vec<String> = (0..n).map(|_| hookd::domain::ids::new_id("evt")).collect();
    let events: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| {
            serde_json::json!({
                "event_id": id, "type": "usage.finalized", "partner_id": partner_id,
                "schema_version": 1,
                "data": {"customer_id": "cus_204", "final_cost": "1.20", "currency": "USD"},
            })
        })
        .collect();
    (ids, serde_json::Value::Array(events).to_string())
}

/// One `POST /v1/events` with `key`: the status and the `Retry-After`
/// header, or why no answer came.
pub async fn post_events(
    http: &awc::Client,
    base_url: &str,
    key: &str,
    body: &str,
) -> Result<(u16, Option<String>), String> {
    let res = http
        .post(format!("{base_url}/v1/events"))
        .insert_header(("authorization", format!("Bearer {key}")))
        .insert_header(("content-type", "application/json"))
        .send_body(body.to_string())
        .await
        .map_err(|e| e.to_string())?;
    let (status, _, headers) = super::answer::try_read_answer(res).await?;
    let retry_after = super::answer::header(&headers, "retry-after").map(str::to_string);
    Ok((status, retry_after))
}
