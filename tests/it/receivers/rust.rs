//! The Rust receiver (`examples/receivers/rust/`, the workspace member
//! `hookd-example-receiver`): every scenario.
//!
//! Its binary is built once per test process by the cargo that runs the
//! tests, into the same target directory and profile as this test binary,
//! with a target that needs dev-dependencies selected beside it: cargo then
//! resolves features as it did for this build, so every dependency is already
//! compiled and only the receiver's own crate is (about 4 s in debug; a
//! third of a second per process when it is fresh).

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
};

use serde_json::Value;

use super::{ReceiverUnderTest, Toolchain};
use crate::receiver_scenarios;

pub static RUST: ReceiverUnderTest = ReceiverUnderTest::sqlite("the Rust receiver", rust_toolchain);

receiver_scenarios!(RUST);

const PACKAGE: &str = "hookd-example-receiver";

/// The variables cargo (and nextest) set for a test process, by prefix.
const SET_FOR_TESTS: &[&str] = &[
    "CARGO_MANIFEST_",
    "CARGO_PKG_",
    "CARGO_CRATE_",
    "CARGO_BIN_",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "OUT_DIR",
];

fn rust_toolchain() -> Toolchain {
    static READY: OnceLock<Toolchain> = OnceLock::new();
    READY.get_or_init(build).clone()
}

/// Builds the receiver (cargo decides whether anything changed) and returns
/// how to start it.
fn build() -> Toolchain {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut command = Command::new(&cargo);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "build",
            "--workspace",
            "--message-format=json-render-diagnostics",
        ])
        .args(["--bin", PACKAGE])
        // Any target that needs dev-dependencies makes cargo resolve features
        // with them, as for this test binary; without one, dependencies such
        // as futures-util get other features and half the tree is compiled
        // again. `producer` is an example `cargo test` already builds, and
        // one that does not change with the tests.
        .args(["--example", "producer"])
        .args(like_this_test())
        .stdin(Stdio::null());
    // What cargo set for this test process describes the test's own package;
    // build scripts that watch such variables (ring watches CARGO_PKG_NAME)
    // would run again, and this build and the next `cargo test` would take
    // turns compiling half the tree.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if SET_FOR_TESTS.iter().any(|prefix| name.starts_with(prefix)) {
            command.env_remove(&*name);
        }
    }
    let out = match command.output() {
        Ok(out) => out,
        Err(e) => return Toolchain::Missing(format!("cannot run {cargo:?} ({e})")),
    };
    assert!(
        out.status.success(),
        "building {PACKAGE} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let program = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == PACKAGE)
        .and_then(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no {PACKAGE} executable"));
    Toolchain::Ready {
        program,
        args: vec![],
        env: vec![("RUST_LOG".into(), "info".into())],
    }
}

/// The target directory, profile and target triple this test binary was
/// built with (`<target dir>[/<triple>]/<profile dir>/deps/it-…`), as cargo
/// flags; none when its path says nothing.
fn like_this_test() -> Vec<String> {
    let exe = std::env::current_exe().expect("the test binary's path");
    let Some(profile_dir) = exe.parent().and_then(Path::parent) else {
        return vec![];
    };
    // Cargo marks the target directory itself with this file.
    let Some(target_dir) = profile_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
    else {
        return vec![];
    };
    let name = |dir: &Path| dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let profile = match name(profile_dir).as_deref() {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => return vec![],
    };
    let mut flags = vec![
        "--target-dir".to_string(),
        target_dir.display().to_string(),
        "--profile".to_string(),
        profile,
    ];
    if let Some(triple_dir) = profile_dir.parent().filter(|dir| *dir != target_dir) {
        flags.extend(["--target".to_string()].into_iter().chain(name(triple_dir)));
    }
    flags
}
