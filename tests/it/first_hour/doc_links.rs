//! The documentation's links hold in the repository: every relative link
//! and image in README.md, docs/ and the other READMEs names a file or
//! folder that exists, and every `#anchor` names a heading of its page (the
//! anchors GitHub and the served pages give headings).

use std::path::{Path, PathBuf};

use hookd::web::docs::{Home, render};
use pulldown_cmark::{Event, Parser, Tag};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown documents a reader follows links in.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.extend(
        [
            "README.md",
            "tests/README.md",
            "examples/receivers/README.md",
        ]
        .map(|p| root().join(p)),
    );
    docs
}

/// The links and image sources of a Markdown text, in order.
fn targets(markdown: &str) -> Vec<String> {
    Parser::new(markdown)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// Whether the Markdown file at `path` has a heading with this anchor.
fn has_anchor(path: &Path, anchor: &str) -> bool {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    render(&text, Home::Top)
        .0
        .contains(&format!("id=\"{anchor}\""))
}

/// What is wrong with one relative link of `document`, if anything.
fn broken(document: &Path, link: &str) -> Option<String> {
    let (path, anchor) = link.split_once('#').unwrap_or((link, ""));
    let target = if path.is_empty() {
        document.to_path_buf()
    } else {
        document.parent()?.join(path)
    };
    if !target.exists() {
        return Some(format!("{link}: {} does not exist", target.display()));
    }
    let markdown = target.extension().is_some_and(|x| x == "md");
    if !anchor.is_empty() && markdown && !has_anchor(&target, anchor) {
        return Some(format!(
            "{link}: {} has no heading #{anchor}",
            target.display()
        ));
    }
    None
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document)
            .unwrap_or_else(|e| panic!("{}: {e}", document.display()));
        let name = document
            .strip_prefix(root())
            .unwrap_or(&document)
            .display()
            .to_string();
        for link in targets(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            if let Some(problem) = broken(&document, &link) {
                problems.push(format!("{name}: {problem}"));
            }
        }
    }
    assert!(checked >= 40, "the docs' links were found ({checked})");
    assert!(
        problems.is_empty(),
        "broken links:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_link_to_a_missing_file_or_heading_is_found_broken() {
    let readme = root().join("README.md");
    assert!(broken(&readme, "docs/getting-started.md").is_none());
    assert!(broken(&readme, "docs/no-such-page.md").is_some());
    assert!(broken(&readme, "docs/delivery.md#guarantees").is_none());
    assert!(broken(&readme, "docs/delivery.md#no-such-heading").is_some());
    assert!(broken(&readme, "#two-commands").is_none());
}
