//! What the example receivers' and tools' set-ups share: a cache folder
//! under `~/.cache/hookd-ci/`, a tag naming what a build was made from, a
//! lock so that one test process builds while the others wait, and running
//! a set-up step whose failure is a failure (not a missing toolchain), and
//! probing a tool whose absence or failure is a missing toolchain.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::Command,
};

use sha2::{Digest as _, Sha256};

/// `~/.cache/hookd-ci/<sub>` (or under `$XDG_CACHE_HOME`), made if needed.
pub fn cache_root(sub: &str) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .expect("HOME or XDG_CACHE_HOME is set");
    let root = cache.join("hookd-ci").join(sub);
    std::fs::create_dir_all(&root)
        .unwrap_or_else(|e| panic!("the cache folder {}: {e}", root.display()));
    root
}

/// The first 12 hex digits of the SHA-256 of `parts` (each length-prefixed,
/// so that moving bytes from one part to the next changes the tag).
pub fn tag(parts: &[&[u8]]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Holds `<root>/<name>.lock` until dropped: tests run in parallel (threads
/// and processes), and one of them builds.
pub fn exclusive(root: &Path, name: &str) -> File {
    let lock = File::create(root.join(format!("{name}.lock")))
        .unwrap_or_else(|e| panic!("the {name} lock file: {e}"));
    lock.lock()
        .unwrap_or_else(|e| panic!("the {name} lock: {e}"));
    lock
}

/// What a probe of a tool printed on stdout, as text; `Err` says what is
/// missing: the program (`install` says how to get it), or `named` failed.
pub fn probe(command: &mut Command, named: &str, install: &str) -> Result<String, String> {
    match command.output() {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => Err(format!(
            "`{named}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!(
            "no `{}` ({e}); {install}",
            command.get_program().to_string_lossy()
        )),
    }
}

/// Runs a set-up step; a failure is a failure, not a missing toolchain.
pub fn run_step(command: &mut Command) {
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
