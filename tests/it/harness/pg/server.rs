//! Owns making and starting a cluster in a folder: `initdb` into `<dir>/data`, handing the folder
//! to the server's user, and `pg_ctl start` on a free port (127.0.0.1 only, fsync off), with the
//! tail of the server's log when it does not start.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use super::tools::{Tools, run, server_cmd};

/// Makes a new cluster in `<dir>/data`: trust authentication, user `postgres`.
pub(super) fn initdb(tools: &Tools, dir: &Path) -> Result<(), String> {
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
pub(super) fn prepare_dir(tools: &Tools, dir: &Path) -> Result<(), String> {
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
pub(super) fn pg_ctl_start(tools: &Tools, dir: &Path) -> Result<u16, String> {
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
pub(super) fn pg_ctl_start_on(tools: &Tools, dir: &Path, port: u16) -> Result<(), String> {
    pg_ctl_start_with(tools, dir, port, "")
}

/// `pg_ctl start` with `extra` server options after the tests' own (a later
/// `-c` wins).
pub(super) fn pg_ctl_start_with(
    tools: &Tools,
    dir: &Path,
    port: u16,
    extra: &str,
) -> Result<(), String> {
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
         -c synchronous_commit=off -c full_page_writes=off -c max_connections=400 {extra}"
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

pub(super) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
