//! Owns the tests' private PostgreSQL: one cluster shared by every test process, and a fresh, empty database per call.
//!
//! The cluster lives in `$HOOKD_TEST_PG_DIR`, or `<temp dir>/hookd-test-pg` when that is unset:
//!
//! - `lock`: an exclusive lock on it is held only while checking and (re)starting the cluster;
//! - `data/`: the data directory; `port`: the TCP port the server listens on (127.0.0.1 only);
//! - `server.log`: the server's log; the Unix socket is put in the folder too.
//!
//! The server is started with fsync off and trust authentication, and is left running for the next
//! test process; a stale cluster (after a reboot or a kill) is restarted, or wiped and made anew.
//! Databases whose creating process has exited are dropped now and then, so they don't pile up.
//! As root, `initdb` and `pg_ctl` are run as the `postgres` user (else `nobody`) through `runuser`.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
// Finding the programs

/// The programs used, by full path, and who runs the server-side ones.
struct Tools {
    initdb: PathBuf,
    pg_ctl: PathBuf,
    createdb: PathBuf,
    psql: Option<PathBuf>,
    pg_isready: Option<PathBuf>,
    /// `Some((runuser, user))` when running as root: server programs run as `user`.
    run_as: Option<(PathBuf, String)>,
}

fn tools() -> Result<&'static Tools, String> {
    static TOOLS: OnceLock<Result<Tools, String>> = OnceLock::new();
    TOOLS.get_or_init(find_tools).as_ref().map_err(Clone::clone)
}

fn find_tools() -> Result<Tools, String> {
    const NOT_FOUND: &str = "PostgreSQL server binaries not found (initdb, pg_ctl): install Debian's \
        `postgresql` package, or set HOOKD_TEST_PG=skip to skip PostgreSQL tests";
    let path_dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let has_server =
        |dir: &Path| is_executable(&dir.join("initdb")) && is_executable(&dir.join("pg_ctl"));
    let bindir = match path_dirs.iter().find(|d| has_server(d)) {
        Some(dir) => dir.clone(),
        None => {
            let out = Command::new("pg_config")
                .arg("--bindir")
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("{NOT_FOUND} (pg_config: {e})"))?;
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if !out.status.success() || !has_server(&dir) {
                return Err(NOT_FOUND.to_string());
            }
            dir
        }
    };
    // Client programs: the server's own folder first, then PATH.
    let find = |name: &str| {
        std::iter::once(&bindir)
            .chain(path_dirs.iter())
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    };
    let createdb = find("createdb").ok_or_else(|| {
        format!(
            "PostgreSQL's createdb not found in {} nor on PATH",
            bindir.display()
        )
    })?;
    let run_as = if is_root() {
        let runuser = path_dirs
            .iter()
            .map(|d| d.join("runuser"))
            .chain(["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].map(PathBuf::from))
            .find(|p| is_executable(p))
            .ok_or("running as root, but `runuser` (needed to run initdb and pg_ctl as another user) was not found")?;
        let user = ["postgres", "nobody"]
            .into_iter()
            .find(|u| {
                Command::new("id")
                    .args(["-u", u])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            })
            .ok_or("running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as")?;
        Some((runuser, user.to_string()))
    } else {
        None
    };
    Ok(Tools {
        initdb: bindir.join("initdb"),
        pg_ctl: bindir.join("pg_ctl"),
        createdb,
        psql: find("psql"),
        pg_isready: find("pg_isready"),
        run_as,
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "0")
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
    let result = match running_port(tools, dir) {
        Some(port) => Ok(Cluster { tools, port }),
        None => start_cluster(tools, dir).map(|port| Cluster { tools, port }),
    };
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

/// Makes a new cluster in `<dir>/data`: trust authentication, user `postgres`.
fn initdb(tools: &Tools, dir: &Path) -> Result<(), String> {
    run(
        server_cmd(tools, &tools.initdb, dir)
            .arg("-D")
            .arg(dir.join("data"))
            .args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ]),
        "initdb",
    )
    .map(drop)
}

/// Gives the cluster folder to the user that runs the server, and checks that user can reach it.
fn prepare_dir(tools: &Tools, dir: &Path) -> Result<(), String> {
    let Some((runuser, user)) = &tools.run_as else {
        return Ok(());
    };
    run(
        Command::new("chown")
            .arg("-R")
            .arg(format!("{user}:"))
            .arg(dir),
        "chown",
    )?;
    run(
        Command::new(runuser)
            .args(["-u", user, "--", "test", "-w"])
            .arg(dir)
            .current_dir("/"),
        "checking access to the cluster folder",
    )
    .map_err(|e| {
        format!(
            "user {user} cannot write to {} (is every parent folder traversable by others?); \
             set HOOKD_TEST_PG_DIR to a folder under /tmp: {e}",
            dir.display()
        )
    })?;
    Ok(())
}

/// `pg_ctl start` on a free port, trying a second port if the first was taken meanwhile.
fn pg_ctl_start(tools: &Tools, dir: &Path) -> Result<u16, String> {
    let mut last_error = String::new();
    for _ in 0..2 {
        let port = free_port()?;
        match pg_ctl_start_on(tools, dir, port) {
            Ok(()) => {
                let port_file = dir.join("port");
                fs::write(&port_file, format!("{port}\n"))
                    .map_err(|e| format!("cannot write {}: {e}", port_file.display()))?;
                return Ok(port);
            }
            Err(e) => last_error = e,
        }
    }
    Err(last_error)
}

/// `pg_ctl start` of the cluster in `dir` on `port`; an Err ends with the server's log.
fn pg_ctl_start_on(tools: &Tools, dir: &Path, port: u16) -> Result<(), String> {
    let log = dir.join("server.log");
    let log_start = fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    // A Unix socket path may be at most ~107 bytes: with a longer folder, go without one (the
    // tests connect over TCP, and `pg_ctl -w` watches postmaster.pid).
    let socket_dir = dir.to_string_lossy();
    let socket_dir = if socket_dir.len() <= 80 {
        shell_quote(&socket_dir)
    } else {
        "''".to_string()
    };
    let options = format!(
        "-p {port} -c listen_addresses=127.0.0.1 -k {socket_dir} -c fsync=off \
         -c synchronous_commit=off -c full_page_writes=off -c max_connections=400"
    );
    run(
        server_cmd(tools, &tools.pg_ctl, dir)
            .arg("-D")
            .arg(dir.join("data"))
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "-o", &options, "start"]),
        "pg_ctl start",
    )
    .map(drop)
    .map_err(|e| {
        format!(
            "{e}\nserver log ({}):\n{}",
            log.display(),
            log_tail(&log, log_start)
        )
    })
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free TCP port on 127.0.0.1: {e}"))
}

/// The last lines the server logged since byte `from` (or the log's last lines, if shorter).
fn log_tail(log: &Path, from: u64) -> String {
    const MAX: u64 = 4000;
    let Ok(mut file) = File::open(log) else {
        return "(no log file)".to_string();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = from.max(len.saturating_sub(MAX)).min(len);
    let mut bytes = Vec::new();
    if file
        .seek(SeekFrom::Start(start))
        .and_then(|_| file.read_to_end(&mut bytes))
        .is_err()
    {
        return "(cannot read the log file)".to_string();
    }
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    if text.is_empty() {
        "(empty)".to_string()
    } else {
        text
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A command for a server-side program: through `runuser` when root, run from `dir` so that a
/// current folder the server user cannot enter does not trouble it.
fn server_cmd(tools: &Tools, program: &Path, dir: &Path) -> Command {
    let mut cmd = match &tools.run_as {
        Some((runuser, user)) => {
            let mut cmd = Command::new(runuser);
            cmd.args(["-u", user, "--"]).arg(program);
            cmd
        }
        None => Command::new(program),
    };
    cmd.current_dir(dir);
    cmd
}

/// Runs `cmd` to completion; an Err says what failed, with its output.
fn run(cmd: &mut Command, what: &str) -> Result<Output, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        return Ok(out);
    }
    let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy()).collect();
    Err(format!(
        "{what} failed ({}): {} {}\nstderr: {}\nstdout: {}",
        out.status,
        cmd.get_program().to_string_lossy(),
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim(),
        String::from_utf8_lossy(&out.stdout).trim(),
    ))
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

// ---------------------------------------------------------------------------------------------
// A cluster of a test's own

/// A PostgreSQL cluster of one test's own, in a temp dir on a free port, for a test that stops
/// and starts the server (the shared cluster must stay up for the others); stopped when dropped.
pub struct PrivateCluster {
    tools: &'static Tools,
    dir: tempfile::TempDir,
    port: u16,
}

impl PrivateCluster {
    /// Makes and starts the cluster (`initdb`, then `pg_ctl start`; a few seconds).
    pub async fn new() -> Result<PrivateCluster, String> {
        tokio::task::spawn_blocking(|| {
            let tools = tools()?;
            let dir = tempfile::tempdir().map_err(|e| format!("no temp dir for a cluster: {e}"))?;
            prepare_dir(tools, dir.path())?;
            initdb(tools, dir.path())?;
            let port = pg_ctl_start(tools, dir.path())?;
            Ok(PrivateCluster { tools, dir, port })
        })
        .await
        .map_err(|e| format!("PrivateCluster::new: the blocking task failed: {e}"))?
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server (`-m fast`: clients are disconnected at once) and waits until it is down.
    pub async fn stop(&self) -> Result<(), String> {
        let mut cmd = self.pg_ctl(&["-m", "fast", "-w", "-t", "30", "stop"]);
        tokio::task::spawn_blocking(move || run(&mut cmd, "pg_ctl stop").map(drop))
            .await
            .map_err(|e| format!("pg_ctl stop: the blocking task failed: {e}"))?
    }

    /// Starts the stopped server again, on the same port.
    pub async fn start(&self) -> Result<(), String> {
        let (tools, dir, port) = (self.tools, self.dir.path().to_path_buf(), self.port);
        tokio::task::spawn_blocking(move || pg_ctl_start_on(tools, &dir, port))
            .await
            .map_err(|e| format!("pg_ctl start: the blocking task failed: {e}"))?
    }

    fn pg_ctl(&self, args: &[&str]) -> Command {
        let mut cmd = server_cmd(self.tools, &self.tools.pg_ctl, self.dir.path());
        cmd.arg("-D").arg(self.dir.path().join("data")).args(args);
        cmd
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        // Whether it runs or not; the temp dir goes after.
        let _ = run(
            &mut self.pg_ctl(&["-m", "immediate", "-w", "-t", "30", "stop"]),
            "pg_ctl stop",
        );
    }
}
