//! Owns finding the PostgreSQL programs and running them: the server's binaries on PATH or by
//! `pg_config --bindir`, the client programs next to them, and, as root, the user and `runuser`
//! that run the server-side ones (`initdb`, `pg_ctl`), as `postgres` (else `nobody`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Finding the programs

/// The programs used, by full path, and who runs the server-side ones.
pub(super) struct Tools {
    pub(super) initdb: PathBuf,
    pub(super) pg_ctl: PathBuf,
    pub(super) createdb: PathBuf,
    pub(super) psql: Option<PathBuf>,
    pub(super) pg_isready: Option<PathBuf>,
    pub(super) pg_basebackup: Option<PathBuf>,
    /// `Some((runuser, user))` when running as root: server programs run as `user`.
    pub(super) run_as: Option<(PathBuf, String)>,
}

pub(super) fn tools() -> Result<&'static Tools, String> {
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
        pg_basebackup: find("pg_basebackup"),
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
// Running them

/// A command for a server-side program: through `runuser` when root, run from `dir` so that a
/// current folder the server user cannot enter does not trouble it.
pub(super) fn server_cmd(tools: &Tools, program: &Path, dir: &Path) -> Command {
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
pub(super) fn run(cmd: &mut Command, what: &str) -> Result<Output, String> {
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
