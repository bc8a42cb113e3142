//! The TypeScript receiver (`examples/receivers/typescript/`): every scenario.
//!
//! Its `node_modules` lives in the user's cache
//! (`~/.cache/hookd-ci/receivers/typescript-…/`), installed with `npm ci`
//! once per `package.json`, `package-lock.json` and Node version; beside it,
//! once per version of the sources, the locked `tsc` compiles them and their
//! unit tests run (`node --test`). better-sqlite3 is built from source there
//! (about a minute, once): `npm_config_build_from_source` stops its
//! `prebuild-install` from fetching a binary from GitHub, and
//! `npm_config_nodedir` gives node-gyp the installed Node's headers instead of
//! a download from nodejs.org, so the install needs the npm registry only.
//! Node 20 or later is `node` and `npm` on `PATH`; without them, the headers
//! or a C++ toolchain, the tests skip loudly, and fail under `CI=true`.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
    time::Instant,
};

use super::{ReceiverUnderTest, Toolchain, example_dir};
use crate::{
    harness::toolchain::{self, run_step},
    receiver_scenarios,
};

pub static TYPESCRIPT: ReceiverUnderTest =
    ReceiverUnderTest::sqlite("the TypeScript receiver", typescript_toolchain);

receiver_scenarios!(TYPESCRIPT);

const INSTALL: &str = "`apt-get install nodejs g++ make python3` (Node 20 or later, with its headers in include/node)";
/// What the cold install may take (better-sqlite3's native build is most of
/// it) before it counts as hung.
const INSTALL_LIMIT: &str = "900s";

fn typescript_toolchain() -> Toolchain {
    static READY: OnceLock<Toolchain> = OnceLock::new();
    Toolchain::once(&READY, || {
        let (node, script) = build()?;
        Ok(Toolchain::Ready {
            program: node,
            args: vec![script.display().to_string()],
            env: vec![],
        })
    })
}

/// Node itself and what the native build needs.
struct Node {
    /// `v20.20.2`.
    version: String,
    executable: PathBuf,
    /// The prefix whose `include/node` holds the headers node-gyp compiles against.
    headers: PathBuf,
}

fn probe() -> Result<Node, String> {
    let text = toolchain::probe(
        Command::new("node").args(["-p", "process.version + '\\n' + process.execPath"]),
        "node",
        INSTALL,
    )?;
    let [version, executable] = text.lines().collect::<Vec<_>>()[..] else {
        return Err(format!("`node -p` printed something unexpected: {text}"));
    };
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 20 {
        return Err(format!("Node {version} is older than 20; {INSTALL}"));
    }
    let executable = PathBuf::from(executable);
    let headers = executable
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if !headers.join("include/node/common.gypi").is_file() {
        return Err(format!(
            "no Node headers in {}/include/node (Debian's nodejs wants libnode-dev); {INSTALL}",
            headers.display()
        ));
    }
    for tool in ["npm", "make", "c++", "python3"] {
        let works = Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !works {
            return Err(format!(
                "no `{tool}` to install and build better-sqlite3; {INSTALL}"
            ));
        }
    }
    Ok(Node {
        version: version.to_string(),
        executable,
        headers,
    })
}

/// Node, and the compiled receiver, installed and built if needed; `Err`
/// says what is missing.
fn build() -> Result<(PathBuf, PathBuf), String> {
    let node = probe()?;
    let example = example_dir("typescript");
    let read = |name: &str| {
        std::fs::read(example.join(name))
            .unwrap_or_else(|e| panic!("the TypeScript example's {name}: {e}"))
    };
    let (manifest, lock) = (read("package.json"), read("package-lock.json"));
    let root = toolchain::cache_root("receivers");
    let deps = root.join(format!(
        "typescript-{}-{}",
        node.version,
        toolchain::tag(&[&manifest, &lock, node.version.as_bytes()])
    ));

    let _lock = toolchain::exclusive(&root, "typescript");
    if !deps.join(".hookd-ready").exists() {
        let _ = std::fs::remove_dir_all(&deps);
        std::fs::create_dir_all(&deps).expect("the dependencies' dir");
        std::fs::write(deps.join("package.json"), &manifest).expect("package.json copied");
        std::fs::write(deps.join("package-lock.json"), &lock).expect("package-lock.json copied");
        let started = Instant::now();
        // `timeout` kills the whole process group (npm, node-gyp, make) if
        // anything hangs after all.
        run_step(
            Command::new("timeout")
                .args(["--kill-after=10s", INSTALL_LIMIT, "npm", "ci"])
                .args(["--no-audit", "--no-fund", "--no-update-notifier"])
                .current_dir(&deps)
                .env("npm_config_build_from_source", "true")
                .env("npm_config_nodedir", &node.headers)
                .env("JOBS", "max"),
        );
        eprintln!(
            "the TypeScript receiver's dependencies installed in {:.0?} ({})",
            started.elapsed(),
            deps.display()
        );
        std::fs::write(deps.join(".hookd-ready"), "").expect("the install's ready mark");
    }
    let script = compile(&node, &deps, &example);
    Ok((node.executable, script))
}

/// Compiles the example's sources beside `deps` (so imports find its
/// `node_modules`) and runs their unit tests, once per version of them;
/// returns the receiver's entry point. Called under the install lock.
fn compile(node: &Node, deps: &Path, example: &Path) -> PathBuf {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(example.join("src"))
        .expect("the example's src/")
        .map(|entry| entry.expect("a src/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ts"))
        .collect();
    sources.sort();
    let mut parts = vec![std::fs::read(example.join("tsconfig.json")).expect("tsconfig.json")];
    for source in &sources {
        parts.push(
            source
                .file_name()
                .expect("a name")
                .as_encoded_bytes()
                .to_vec(),
        );
        parts.push(std::fs::read(source).expect("a source file"));
    }
    let name = format!(
        "build-{}",
        toolchain::tag(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>())
    );
    let build = deps.join(&name);
    let script = build.join("dist/receiver.js");
    if build.join(".hookd-ready").exists() {
        return script;
    }
    // Builds of sources since changed are of no further use.
    for old in std::fs::read_dir(deps)
        .expect("the dependencies' dir")
        .flatten()
    {
        if old.file_name().to_string_lossy().starts_with("build-") {
            let _ = std::fs::remove_dir_all(old.path());
        }
    }
    std::fs::create_dir_all(build.join("src")).expect("the build dir");
    std::fs::copy(example.join("tsconfig.json"), build.join("tsconfig.json"))
        .expect("tsconfig.json copied");
    for source in &sources {
        let name = source.file_name().expect("a name");
        std::fs::copy(source, build.join("src").join(name)).expect("a source copied");
    }
    run_step(
        Command::new(&node.executable)
            .arg(deps.join("node_modules/typescript/bin/tsc"))
            .arg("--project")
            .arg(&build),
    );
    run_step(
        Command::new(&node.executable)
            .args(["--test", "dist/"])
            .current_dir(&build),
    );
    std::fs::write(build.join(".hookd-ready"), "").expect("the build's ready mark");
    script
}
