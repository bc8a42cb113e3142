//! Owns the cluster shared by every test process, and a fresh, empty database per call.
//!
//! The cluster lives in `$HOOKD_TEST_PG_DIR`, or `<temp dir>/hookd-test-pg` when that is unset:
//!
//! - `lock`: an exclusive lock on it is held only while checking and (re)starting the cluster;
//! - `data/`: the data directory; `port`: the TCP port the server listens on (127.0.0.1 only);
//! - `server.log`: the server's log; the Unix socket is put in the folder too.
//!
//! The server is started with fsync off and trust authentication, and is shared by the test
//! processes of a run; `reaper` stops it about 10 s after the last one exits. A stale cluster
//! (after a reboot or a kill) is restarted, or wiped and made anew.
//! Databases whose creating process has exited are dropped now and then, so they don't pile up.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::reaper;
use super::server::{initdb, pg_ctl_start, prepare_dir};
use super::tools::{Tools, run, server_cmd, tools};

/// Returns a `postgres://` URL of a fresh, empty database on a shared private cluster.
///
/// The cluster is started on first use and shared by all test processes (see the module docs).
/// The URL has the form `postgres://postgres@127.0.0.1:PORT/hookd_test_<pid>_<nanos>_<n>`; the
/// database is left behind when the test ends, and dropped by a later call once this process has
/// exited. Errors say what failed, with the failing command's output and, when the server did not
/// start, the tail of its log.
pub async fn fresh_database() -> Result<String, String> {
    tokio::task::spawn_blocking(fresh_database_blocking)
        .await
        .map_err(|e| format!("fresh_database: the blocking task failed: {e}"))?
}

/// Everything about the cluster that a call needs once it is known to be running.
struct Cluster {
    tools: &'static Tools,
    port: u16,
}

fn fresh_database_blocking() -> Result<String, String> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let tools = tools()?;
    let dir = cluster_dir();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let name = format!(
        "hookd_test_{}_{}_{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let mut cluster = ensure_cluster(tools, &dir)?;
    if let Err(first) = createdb(&cluster, &name) {
        // Another process may have restarted the cluster (on a new port) in the meantime.
        cluster = ensure_cluster(tools, &dir)?;
        createdb(&cluster, &name)
            .map_err(|second| format!("{second}\n(first attempt: {first})"))?;
    }
    drop_leftover_databases(&cluster);
    Ok(format!(
        "postgres://postgres@127.0.0.1:{}/{name}",
        cluster.port
    ))
}

fn cluster_dir() -> PathBuf {
    let dir = match std::env::var_os("HOOKD_TEST_PG_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => std::env::temp_dir().join("hookd-test-pg"),
    };
    // Absolute, since the server programs run from inside it.
    std::path::absolute(&dir).unwrap_or(dir)
}

// ---------------------------------------------------------------------------------------------
// Starting the cluster

/// Makes sure the cluster in `dir` runs, starting or making it under the cross-process lock.
fn ensure_cluster(tools: &'static Tools, dir: &Path) -> Result<Cluster, String> {
    fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the cluster folder {}: {e}", dir.display()))?;
    let lock_path = dir.join("lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open the lock file {}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let result = reaper::register(dir).and_then(|()| match running_port(tools, dir) {
        Some(port) => Ok(port),
        None => start_cluster(tools, dir),
    });
    let result = result.and_then(|port| {
        reaper::ensure(tools, dir)?;
        Ok(Cluster { tools, port })
    });
    drop(lock); // releases the lock
    result
}

/// The port of the cluster in `dir` if it is up and answering there.
fn running_port(tools: &Tools, dir: &Path) -> Option<u16> {
    let port: u16 = fs::read_to_string(dir.join("port"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    // The server writes its port as line 4 of postmaster.pid: make sure that whatever answers on
    // the port is this cluster, not some other program that took the port after a reboot.
    let pid_file = fs::read_to_string(dir.join("data").join("postmaster.pid")).ok()?;
    if pid_file.lines().nth(3).map(str::trim) != Some(port.to_string().as_str()) {
        return None;
    }
    is_ready(tools, port).then_some(port)
}

fn is_ready(tools: &Tools, port: u16) -> bool {
    match &tools.pg_isready {
        Some(pg_isready) => Command::new(pg_isready)
            .args([
                "-q",
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
                "-t",
                "5",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
        None => TcpStream::connect_timeout(
            &SocketAddr::from(([127, 0, 0, 1], port)),
            Duration::from_secs(2),
        )
        .is_ok(),
    }
}

/// Starts the cluster in `dir` (called with the lock held), reusing its data if it has any;
/// makes it anew if there is none or it won't start. Returns the port.
fn start_cluster(tools: &Tools, dir: &Path) -> Result<u16, String> {
    let data = dir.join("data");
    let _ = fs::remove_file(dir.join("port"));
    prepare_dir(tools, dir)?;
    let mut reuse_error = None;
    if data.join("PG_VERSION").is_file() {
        // Stale: a server that no longer answers may still hold the data folder. Stop it first.
        if data.join("postmaster.pid").exists() {
            let _ = run(
                server_cmd(tools, &tools.pg_ctl, dir)
                    .arg("-D")
                    .arg(&data)
                    .args(["-m", "immediate", "-w", "-t", "30", "stop"]),
                "pg_ctl stop",
            );
        }
        match pg_ctl_start(tools, dir) {
            Ok(port) => return Ok(port),
            Err(e) => reuse_error = Some(e),
        }
    }
    if data.exists() {
        fs::remove_dir_all(&data).map_err(|e| {
            format!(
                "cannot remove the stale data folder {}: {e}",
                data.display()
            )
        })?;
    }
    initdb(tools, dir)?;
    pg_ctl_start(tools, dir).map_err(|e| match reuse_error {
        Some(before) => {
            format!("{e}\n(before wiping the old data folder, starting it failed too: {before})")
        }
        None => e,
    })
}

// ---------------------------------------------------------------------------------------------
// Databases

fn client_cmd(program: &Path, port: u16) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
        .env("PGCONNECT_TIMEOUT", "10")
        .env_remove("PGDATABASE")
        .env_remove("PGSERVICE")
        .env_remove("PGOPTIONS");
    cmd
}

fn createdb(cluster: &Cluster, name: &str) -> Result<(), String> {
    run(
        client_cmd(&cluster.tools.createdb, cluster.port).args(["-w", name]),
        "createdb",
    )
    .map(drop)
}

/// Once per process: drops the test databases whose creating process (the pid in the name) has
/// exited, so that the shared cluster does not grow without end. It runs in a `psql` that is not
/// waited for; errors are ignored (a database still in use is simply left).
fn drop_leftover_databases(cluster: &Cluster) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    let Some(psql) = cluster.tools.psql.as_deref() else {
        return;
    };
    if STARTED.swap(true, Ordering::Relaxed) {
        return;
    }
    // Databases made before this moment by a process not alive after it are left over; a process
    // started later names its databases with a later time.
    let Ok(before) = SystemTime::now().duration_since(UNIX_EPOCH) else {
        return;
    };
    let Ok(procs) = fs::read_dir("/proc") else {
        return;
    };
    let live: Vec<String> = procs
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    if live.is_empty() {
        return;
    }
    let script = format!(
        "select format('drop database if exists %I', datname) from pg_database \
         where datname ~ '^hookd_test_[0-9]+_[0-9]+_[0-9]+$' \
         and split_part(datname, '_', 3)::bigint <> all ('{{{}}}'::bigint[]) \
         and split_part(datname, '_', 4)::numeric < {} \\gexec\n",
        live.join(","),
        before.as_nanos()
    );
    let child = client_cmd(psql, cluster.port)
        .args(["-w", "-d", "postgres", "-Xq", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Ok(mut child) = child
        && let Some(mut stdin) = child.stdin.take()
    {
        let _ = stdin.write_all(script.as_bytes());
        // Closing stdin lets psql run the script; it is not waited for.
    }
}
