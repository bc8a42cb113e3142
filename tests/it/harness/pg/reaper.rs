//! Stops the shared cluster once no test process uses it, so a test run
//! leaves no server behind: each process that asks for a database registers
//! its pid under `users/`, and the cluster's starter leaves a small detached
//! shell loop (the reaper) that forgets dead pids and, after 10 s with none
//! alive, stops the server under the cluster's lock (so no process can
//! register while it stops). A process that comes later starts it again.

use std::path::Path;
use std::process::{Command, Stdio};

use super::server::shell_quote;
use super::tools::{Tools, server_cmd};

/// Seconds without a living test process before the server is stopped.
const IDLE_SECONDS: u32 = 10;

/// Marks this process as a user of the cluster in `dir` (called with the lock held).
pub(super) fn register(dir: &Path) -> Result<(), String> {
    let users = dir.join("users");
    std::fs::create_dir_all(&users)
        .and_then(|()| std::fs::write(users.join(std::process::id().to_string()), ""))
        .map_err(|e| format!("cannot register in {}: {e}", users.display()))
}

/// Starts a reaper for the running cluster in `dir` unless one is alive
/// (called with the lock held).
pub(super) fn ensure(tools: &Tools, dir: &Path) -> Result<(), String> {
    let alive = std::fs::read_to_string(dir.join("reaper.pid"))
        .ok()
        .and_then(|pid| pid.trim().parse::<u32>().ok())
        .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).is_dir());
    if alive { Ok(()) } else { spawn(tools, dir) }
}

fn spawn(tools: &Tools, dir: &Path) -> Result<(), String> {
    let mut stop = server_cmd(tools, &tools.pg_ctl, dir);
    stop.arg("-D")
        .arg(dir.join("data"))
        .args(["-m", "fast", "-w", "-t", "30", "stop"]);
    let stop = std::iter::once(stop.get_program())
        .chain(stop.get_args())
        .map(|a| shell_quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!(
        r#"echo $$ >reaper.pid
idle=0
while sleep 2; do
  [ -f data/postmaster.pid ] || exit 0
  for f in users/*; do
    [ -e "$f" ] && [ ! -d "/proc/${{f#users/}}" ] && rm -f "$f"
  done
  if [ -n "$(ls -A users 2>/dev/null)" ]; then idle=0; continue; fi
  idle=$((idle + 2))
  [ "$idle" -lt {IDLE_SECONDS} ] && continue
  flock lock sh -c '[ -z "$(ls -A users 2>/dev/null)" ] || exit 1; rm -f port; {stop} >>reaper.log 2>&1' && exit 0
  idle=0
done"#,
        stop = stop.replace('\'', r"'\''"),
    );
    use std::os::unix::process::CommandExt as _;
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: a Ctrl-C to the test run does not stop it,
        // so it still stops the server.
        .process_group(0)
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot start the cluster's reaper: {e}"))
}
