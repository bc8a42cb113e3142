//! The Go receiver (`examples/receivers/go/`): every scenario.
//!
//! Its binary is built once per set of sources, Go version and driver, into
//! the user's cache (`~/.cache/hookd-ci/receivers/go-…/receiver`), after
//! `gofmt`, `go vet` and its own `go test` pass. The SQLite driver is
//! Debian's `golang-github-mattn-go-sqlite3-dev` (no module download: the
//! build replaces the module pinned in `go.mod` by Debian's copy, in a build
//! file of its own, and fails if that copy is another version). Go is `go` on
//! `PATH` (or `HOOKD_TEST_GO`); without it, cgo's C compiler or the driver,
//! the tests skip loudly, and fail under `CI=true` (`.ci/run` installs
//! `golang` and `golang-github-mattn-go-sqlite3-dev`).

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
};

use super::{ReceiverUnderTest, Toolchain, example_dir};
use crate::{
    harness::toolchain::{self, run_step},
    receiver_scenarios,
};

pub static GO: ReceiverUnderTest = ReceiverUnderTest::sqlite("the Go receiver", go_toolchain);

receiver_scenarios!(GO);

const DRIVER_MODULE: &str = "github.com/mattn/go-sqlite3";
/// Where Debian's package puts the driver's source.
const DRIVER_DIR: &str = "/usr/share/gocode/src/github.com/mattn/go-sqlite3";
const DRIVER_PACKAGE: &str = "golang-github-mattn-go-sqlite3-dev";
const INSTALL: &str = "`apt-get install golang golang-github-mattn-go-sqlite3-dev`";

fn go_toolchain() -> Toolchain {
    static READY: OnceLock<Toolchain> = OnceLock::new();
    Toolchain::once(&READY, || build().map(Toolchain::program))
}

/// The receiver's binary, built if needed; `Err` says what is missing.
fn build() -> Result<PathBuf, String> {
    let go = std::env::var("HOOKD_TEST_GO").unwrap_or_else(|_| "go".into());
    let env = toolchain::probe(
        Command::new(&go).args(["env", "GOVERSION", "GOROOT", "CC"]),
        &format!("{go} env"),
        &format!("{INSTALL}, or set HOOKD_TEST_GO"),
    )?;
    let [version, goroot, cc] = env.lines().collect::<Vec<_>>()[..] else {
        return Err(format!("`{go} env` printed something unexpected: {env}"));
    };
    // The driver is cgo: it needs a C compiler (and libsqlite3-dev, which
    // Debian's driver package depends on).
    if Command::new(cc).arg("--version").output().is_err() {
        return Err(format!(
            "no C compiler `{cc}` for cgo; `apt-get install gcc`"
        ));
    }
    let driver = driver_version()?;

    let sources = sources();
    let mut parts: Vec<&[u8]> = Vec::new();
    for (name, content) in &sources {
        parts.extend([name.as_bytes(), content.as_slice()]);
    }
    parts.extend([version.as_bytes(), driver.as_bytes()]);
    let root = toolchain::cache_root("receivers");
    let out = root.join(format!("go-{version}-{}", toolchain::tag(&parts)));
    let binary = out.join("receiver");

    let _lock = toolchain::exclusive(&root, "go");
    if !binary.exists() {
        let go_mod = &sources
            .iter()
            .find(|(n, _)| n == "go.mod")
            .expect("go.mod")
            .1;
        compile(&go, Path::new(goroot), go_mod, &out);
    }
    Ok(binary)
}

/// Checks and builds the receiver into `out/receiver`, offline.
fn compile(go: &str, goroot: &Path, go_mod: &[u8], out: &Path) {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).expect("the build dir");
    // The committed go.mod plus a replace: Debian's copy of the pinned
    // module, so nothing is downloaded (GOPROXY=off makes sure).
    let modfile = out.join("build.mod");
    let replace = format!("\nreplace {DRIVER_MODULE} => {DRIVER_DIR}\n");
    std::fs::write(&modfile, [go_mod, replace.as_bytes()].concat()).expect("the build's go.mod");
    let modfile = format!("-modfile={}", modfile.display());

    let gofmt = Command::new(goroot.join("bin/gofmt"))
        .args(["-l", "."])
        .current_dir(example_dir("go"))
        .output()
        .expect("gofmt runs");
    assert!(
        gofmt.status.success() && gofmt.stdout.is_empty(),
        "the Go receiver is not gofmt-formatted: {}{}",
        String::from_utf8_lossy(&gofmt.stdout),
        String::from_utf8_lossy(&gofmt.stderr)
    );
    run_step(go_command(go).args(["vet", &modfile, "."]));
    run_step(go_command(go).args(["test", &modfile, "-count=1", "."]));
    // Built aside and renamed: a build cut short leaves no binary to trust.
    let partial = out.join("receiver.partial");
    run_step(
        go_command(go)
            .args(["build", &modfile, "-trimpath", "-o"])
            .arg(&partial)
            .arg("."),
    );
    std::fs::rename(&partial, out.join("receiver")).expect("the built receiver moves into place");
}

/// The version of Debian's driver, which must be the one `go.mod` pins: the
/// test would otherwise run other code than a partner builds.
fn driver_version() -> Result<String, String> {
    let missing = || format!("no Go SQLite driver at {DRIVER_DIR}; {INSTALL}");
    if !Path::new(DRIVER_DIR).join("go.mod").exists() {
        return Err(missing());
    }
    let out = Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", DRIVER_PACKAGE])
        .output()
        .map_err(|_| missing())?;
    // "1.14.16~ds1-1": upstream 1.14.16, repacked by Debian.
    let debian = String::from_utf8_lossy(&out.stdout).into_owned();
    let upstream = debian.split(['~', '-', '+']).next().unwrap_or_default();
    let go_mod = std::fs::read_to_string(example_dir("go").join("go.mod")).expect("go.mod");
    let pinned = go_mod
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("require ")?
                .strip_prefix(DRIVER_MODULE)
        })
        .map(|v| v.trim().trim_start_matches('v'))
        .expect("go.mod requires the driver on one line");
    if !out.status.success() || upstream != pinned {
        return Err(format!(
            "go.mod pins {DRIVER_MODULE} v{pinned}, Debian's {DRIVER_PACKAGE} is {debian:?}; \
             install that version, or change the pin with it"
        ));
    }
    Ok(debian)
}

/// What the build depends on in the example's directory, by name: the Go
/// files (tests too: they run) and go.mod.
fn sources() -> Vec<(String, Vec<u8>)> {
    let mut sources: Vec<(String, Vec<u8>)> = std::fs::read_dir(example_dir("go"))
        .expect("the Go example's directory")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "go") || path.ends_with("go.mod"))
        .map(|path| {
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into();
            (name, std::fs::read(&path).expect("a Go source"))
        })
        .collect();
    sources.sort();
    sources
}

/// `go` in the example's directory, offline.
fn go_command(go: &str) -> Command {
    let mut command = Command::new(go);
    command
        .current_dir(example_dir("go"))
        .env("GOPROXY", "off")
        .env("GOFLAGS", "")
        .env("CGO_ENABLED", "1");
    command
}
