//! The benchmarks page holds the table the bench prints: the same columns
//! in the same order, each row a whole row of a release build.

#[path = "../../../examples/bench/report.rs"]
#[allow(dead_code)]
mod report;

/// The lines of the table under "## The latest figures" in docs/benchmarks.md.
fn latest_table() -> Vec<String> {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/benchmarks.md"))
        .expect("docs/benchmarks.md is readable");
    let section = page
        .split("\n## The latest figures\n")
        .nth(1)
        .expect("docs/benchmarks.md has \"## The latest figures\"");
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_benchmarks_page_shows_the_table_the_bench_prints() {
    let table = latest_table();
    let header: Vec<String> = report::header().lines().map(str::to_string).collect();
    assert!(
        table.len() > header.len(),
        "the latest figures are a table with rows: {table:?}"
    );
    assert_eq!(table[..header.len()], header[..], "the bench's header");
    let build = report::COLUMNS
        .iter()
        .position(|c| *c == "build")
        .expect("a build column");
    for row in &table[header.len()..] {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), report::COLUMNS.len(), "a whole row: {row}");
        assert_eq!(
            cells[build], "release",
            "figures come from release builds: {row}"
        );
    }
}
