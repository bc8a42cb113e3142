//! hookd as a child process (`hookd serve`, the binary of this build's
//! profile), and a sampler that follows its memory and open files in /proc.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use anyhow::Context as _;

/// `cargo build [--release] --bin hookd` (an example does not build the
/// binary, and others may have rebuilt it from another checkout since).
pub fn build_binary() -> anyhow::Result<PathBuf> {
    // A binary built elsewhere (a copy set aside, another commit's).
    if let Some(bin) = std::env::var_os("HOOKD_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let profile = if cfg!(debug_assertions) {
        vec![]
    } else {
        vec!["--release"]
    };
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--bin", "hookd"])
        .args(&profile)
        .status()
        .context("running cargo build for the hookd binary")?;
    anyhow::ensure!(status.success(), "building the hookd binary failed");
    let exe = std::env::current_exe()?;
    // target/<profile>/examples/bench → target/<profile>/hookd
    let binary = exe
        .parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("hookd"))
        .context("finding the target folder")?;
    anyhow::ensure!(binary.exists(), "{} is missing", binary.display());
    Ok(binary)
}

/// A free port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A `hookd serve` child that answered `/healthz`, and where its log goes.
pub struct Served {
    pub child: Child,
    /// `http://<listen>`.
    pub base: String,
    pub log: PathBuf,
    /// The folder of `log`, kept until this is dropped.
    _logs: tempfile::TempDir,
}

/// Starts `binary serve` listening on `listen` and waits until it is healthy.
pub async fn serve_healthy(
    binary: &Path,
    env: Vec<(String, String)>,
    listen: &str,
) -> anyhow::Result<Served> {
    let logs = tempfile::tempdir()?;
    let log = logs.path().join("hookd.log");
    let mut child = serve(binary, env, &log)?;
    let base = format!("http://{listen}");
    wait_healthy(&mut child, &base, &log).await?;
    Ok(Served {
        child,
        base,
        log,
        _logs: logs,
    })
}

/// Starts `binary serve` with only `env`, its stderr into `log`.
pub fn serve(binary: &Path, env: Vec<(String, String)>, log: &Path) -> anyhow::Result<Child> {
    let log = std::fs::File::create(log)?;
    Command::new(binary)
        .arg("serve")
        .env_clear()
        .envs(env)
        .envs(std::env::vars().filter(|(k, _)| k.starts_with("MALLOC_") || k == "GLIBC_TUNABLES"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .context("starting hookd serve")
}

/// SIGTERM, then waits for the exit; SIGKILL if it takes over 30 s.
pub fn stop(child: &mut Child) -> String {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return status.to_string();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    "killed after 30 s without exiting on SIGTERM".into()
}

/// Waits until `GET <base>/healthz` answers 200; fails if the child exits
/// or 60 s pass first.
pub async fn wait_healthy(child: &mut Child, base: &str, log: &Path) -> anyhow::Result<()> {
    let client = awc::Client::default();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            anyhow::bail!("hookd exited ({status}) before it was healthy:\n{log}");
        }
        let res = client
            .get(format!("{base}/healthz"))
            .timeout(Duration::from_secs(1))
            .send()
            .await;
        if res.is_ok_and(|r| r.status() == 200) {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "hookd not healthy in 60 s");
        actix_rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The peaks a `Sampler` saw.
#[derive(Clone, Copy, Default, Debug)]
pub struct Peaks {
    /// VmHWM, in KiB.
    pub rss_kib: u64,
    pub fds: usize,
}

/// Reads `/proc/<pid>/status` and counts `/proc/<pid>/fd` every 100 ms on a
/// thread of its own, keeping the peaks.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Peaks>,
}

impl Sampler {
    pub fn start(pid: u32) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peaks = Peaks::default();
            let pid = pid.to_string();
            while !stopped.load(Relaxed) {
                let now = sample(&pid);
                peaks.rss_kib = peaks.rss_kib.max(now.rss_kib);
                peaks.fds = peaks.fds.max(now.fds);
                std::thread::sleep(Duration::from_millis(100));
            }
            peaks
        });
        Sampler { stop, thread }
    }

    pub fn finish(self) -> Peaks {
        self.stop.store(true, Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// `pid`'s peak RSS so far and its open files now.
pub fn sample(pid: &str) -> Peaks {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    Peaks {
        rss_kib: crate::report::status_kib(pid, "VmHWM"),
        fds,
    }
}

/// The lines of hookd's log at WARN or ERROR: how many, and the first few.
pub fn warnings(log: &Path) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let bad: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        .collect();
    (
        bad.len(),
        bad.iter().take(5).map(|l| l.to_string()).collect(),
    )
}
