//! Python tools for tests: a venv per pinned `requirements.txt`, made once
//! in the user's cache (`~/.cache/hookd-ci/<name>/`) with `pip install
//! --require-hashes --only-binary=:all:`, and keyed by the file's content
//! and the Python version, so a second run costs nothing.
//!
//! Python is `python3` on `PATH` (or `HOOKD_TEST_PYTHON`). Without it, or
//! without its `venv` module, a test skips loudly, and fails under `CI=true`
//! (`.ci/run` installs `python3` and `python3-venv`).

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use sha2::{Digest as _, Sha256};

/// Whether tests run in CI, where a missing tool is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The venv's interpreter, or `None` after saying loudly why `what` is
/// skipped; under `CI=true` a missing Python fails the test instead.
pub fn venv_or_skip(what: &str, cache: &str, requirements: &Path) -> Option<PathBuf> {
    match venv(cache, requirements) {
        Ok(python) => Some(python),
        Err(why) if in_ci() => panic!("{what} cannot run, and CI must not skip it: {why}"),
        Err(why) => {
            eprintln!("SKIPPED: {what} cannot run here: {why}");
            None
        }
    }
}

/// The interpreter of a venv with `requirements` installed, made if needed
/// under `~/.cache/hookd-ci/<cache>/`; `Err` says what is missing.
pub fn venv(cache: &str, requirements: &Path) -> Result<PathBuf, String> {
    let python = std::env::var("HOOKD_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args([
            "-c",
            "import ensurepip, sqlite3, venv, sys; print('%d.%d.%d' % sys.version_info[:3])",
        ])
        .stderr(Stdio::piped())
        .output();
    let version = match probe {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Ok(out) => {
            return Err(format!(
                "`{python}` lacks venv, ensurepip or sqlite3 ({}); `apt-get install python3-venv`",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Err(e) => {
            return Err(format!(
                "no `{python}` ({e}); `apt-get install python3 python3-venv`, or set HOOKD_TEST_PYTHON"
            ));
        }
    };
    let pinned = std::fs::read(requirements)
        .unwrap_or_else(|e| panic!("{} is readable: {e}", requirements.display()));
    let digest = Sha256::digest([pinned.as_slice(), version.as_bytes()].concat());
    let tag: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let home = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .expect("HOME or XDG_CACHE_HOME is set");
    let root = home.join("hookd-ci").join(cache);
    std::fs::create_dir_all(&root).expect("the venv's cache dir");
    let venv = root.join(format!("python-{version}-{tag}"));
    let interpreter = venv.join("bin/python");

    // Tests run in parallel (threads or processes): one makes the venv.
    let lock = std::fs::File::create(root.join("python.lock")).expect("the venv lock file");
    lock.lock().expect("the venv lock");
    let ready = venv.join(".hookd-ready");
    if !ready.exists() {
        let _ = std::fs::remove_dir_all(&venv);
        run(Command::new(&python).arg("-m").arg("venv").arg(&venv));
        run(Command::new(&interpreter)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--require-hashes", "--only-binary=:all:", "-r"])
            .arg(requirements));
        std::fs::write(&ready, "").expect("the venv's ready mark");
    }
    Ok(interpreter)
}

/// Runs a setup command; a failure is a failure, not a missing toolchain.
fn run(command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?} runs: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
