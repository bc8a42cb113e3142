//! How this suite's own tests are written: every async test runs on a
//! system the harness tears down (`#[hookd_test_macros::test]` or
//! `#[both_backends]`), so a task dropped at teardown hands its database
//! connection back instead of panicking outside a runtime, and one failing
//! test cannot abort the rest.

use std::path::{Path, PathBuf};

/// Test attributes that run a body on a system the harness does not tear down.
const UNMANAGED: &[&str] = &["#[actix_rt::test", "#[tokio::test", "#[actix_web::test"];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|x| x == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn every_async_test_is_torn_down_by_the_harness() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(
        files.len() > 50,
        "the suite's files are found: {}",
        files.len()
    );
    let unmanaged: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).expect("a test file");
            text.lines()
                .enumerate()
                .filter(|(_, line)| UNMANAGED.iter().any(|a| line.trim_start().starts_with(a)))
                .map(|(n, _)| format!("{}:{}", path.display(), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        unmanaged.is_empty(),
        "async tests on a system the harness does not tear down (use \
         #[hookd_test_macros::test]): {unmanaged:#?}"
    );
}
