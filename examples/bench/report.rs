//! How figures are printed: standard output is one Markdown table (a
//! header, then one row per result, each with the date, commit, build
//! profile, core count, backend and scenario beside its figures), ready to
//! paste into docs/benchmarks.md; details under a result go to standard
//! error. And the small formatters the rows use.

use std::{process::Command, time::Duration};

/// The columns of every row, in order.
pub const COLUMNS: [&str; 8] = [
    "date",
    "commit",
    "build",
    "cores",
    "backend",
    "scenario",
    "figures",
    "conditions",
];

/// The table's header: the column names and the separator line.
pub fn header() -> String {
    format!(
        "| {} |\n|{}",
        COLUMNS.join(" | "),
        "---|".repeat(COLUMNS.len())
    )
}

/// One row of the table: today, this commit, this build and machine, then
/// the result's own cells.
pub fn row(scenario: &str, backend: &str, figures: &str, conditions: &str) {
    let cells = [
        today(),
        commit(),
        build().to_string(),
        cores().to_string(),
        backend.to_string(),
        scenario.to_string(),
        figures.to_string(),
        conditions.to_string(),
    ];
    println!("| {} |", cells.map(|c| c.replace('|', "/")).join(" | "));
}

/// A line about the result above it (the database's view, the receiver's
/// connections, warnings): on standard error, so standard output stays one
/// table.
pub fn detail(line: &str) {
    eprintln!("    {line}");
}

/// Today's date in UTC.
fn today() -> String {
    chrono::Utc::now().format("%Y-%m-%d").to_string()
}

/// The commit the bench was run from (`git rev-parse --short HEAD`), with
/// `+changes` when tracked files differ from it: of the checkout it runs in
/// when it runs in one (so a copied binary of an older commit, run from a
/// worktree of that commit, names it), else of the one it was built in;
/// `unknown` outside both.
fn commit() -> String {
    let here = std::env::current_dir().ok().filter(|dir| {
        Command::new("git")
            .args(["rev-parse", "--is-inside-work-tree"])
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let dir = here.unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=7", "HEAD"]) {
        Some(hash) => {
            let changed = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if changed {
                format!("{hash}+changes")
            } else {
                hash
            }
        }
        None => "unknown".into(),
    }
}

/// Prints the FAIL line of a run whose counts did not add up; returns `ok`.
pub fn verdict(scenario: &str, backend: &str, ok: bool, problems: &[String]) -> bool {
    if !ok {
        let shown: Vec<&str> = problems.iter().take(5).map(String::as_str).collect();
        let more = problems.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" (+{more} more)")
        } else {
            String::new()
        };
        println!(
            "FAIL {scenario} {backend}: duplicates or lost deliveries; {}{more}",
            shown.join("; ")
        );
    }
    ok
}

/// The build profile: figures from a debug build are not figures.
pub fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "DEBUG"
    } else {
        "release"
    }
}

pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub fn per_sec(n: usize, over: Duration) -> String {
    let rate = n as f64 / over.as_secs_f64().max(1e-9);
    if rate >= 10_000.0 {
        format!("{:.1}k", rate / 1000.0)
    } else {
        format!("{rate:.0}")
    }
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// A field of `/proc/<pid>/status` in KiB (`VmHWM`, `VmRSS`); 0 if unreadable.
pub fn status_kib(pid: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = status.lines().find_map(|l| {
        l.strip_prefix(field)?
            .strip_prefix(':')?
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    });
    kib.unwrap_or(0)
}

/// VmHWM of `pid` ("self" for this process): its peak resident memory.
pub fn peak_rss_mib(pid: &str) -> u64 {
    status_kib(pid, "VmHWM") / 1024
}
