//! How figures are printed: one Markdown table row per result (scenario,
//! backend, figures, conditions), and the small formatters the rows use.

use std::time::Duration;

/// Prints `| scenario | backend | figures | conditions, N cores, build |`
/// and, if the counts failed, a FAIL line after it.
pub fn row(scenario: &str, backend: &str, figures: &str, conditions: &str) {
    println!(
        "| {scenario} | {backend} | {figures} | {conditions}; {} cores, {} |",
        cores(),
        build()
    );
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

pub fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "DEBUG build"
    } else {
        "release build"
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
