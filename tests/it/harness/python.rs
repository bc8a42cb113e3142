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

use super::toolchain::run_step;

/// The venv's interpreter, or `None` after saying loudly why `what` is
/// skipped; under `CI=true` a missing Python fails the test instead.
pub fn venv_or_skip(what: &str, cache: &str, requirements: &Path) -> Option<PathBuf> {
    match venv(cache, requirements) {
        Ok(python) => Some(python),
        Err(why) => {
            super::skip::skipping(what, &why);
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
    let root = super::toolchain::cache_root(cache);
    let tag = super::toolchain::tag(&[&pinned, version.as_bytes()]);
    let venv = root.join(format!("python-{version}-{tag}"));
    let interpreter = venv.join("bin/python");

    let _lock = super::toolchain::exclusive(&root, "python");
    let ready = venv.join(".hookd-ready");
    if !ready.exists() {
        let _ = std::fs::remove_dir_all(&venv);
        run_step(Command::new(&python).arg("-m").arg("venv").arg(&venv));
        run_step(
            Command::new(&interpreter)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(["--require-hashes", "--only-binary=:all:", "-r"])
                .arg(requirements),
        );
        std::fs::write(&ready, "").expect("the venv's ready mark");
    }
    Ok(interpreter)
}
