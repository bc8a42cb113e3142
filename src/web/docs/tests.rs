use super::*;

#[test]
fn headings_get_githubs_anchors_and_repeats_are_numbered() {
    let (html, sections) = render(
        "# hookd\n\n## Try it\n\n## The `serve --dev` mode\n\n## Try it\n",
        Home::Top,
    );
    assert_eq!(
        sections,
        [
            ("Try it", "try-it"),
            ("The serve --dev mode", "the-serve---dev-mode"),
            ("Try it", "try-it-1")
        ]
        .map(|(title, anchor)| Section {
            title: title.into(),
            anchor: anchor.into()
        })
    );
    assert!(html.contains(r#"<h2 id="try-it-1">"#), "{html}");
    assert!(html.contains(r#"<h1 id="hookd">"#), "{html}");
}

#[test]
fn images_become_their_alt_text() {
    let (html, _) = render("![The overview](screenshots/overview.png)", Home::Docs);
    assert!(!html.contains("<img"), "{html}");
    assert!(html.contains("[image: The overview]"), "{html}");
}

#[test]
fn raw_html_in_the_docs_is_escaped_by_nothing_but_the_csp_forbids_script() {
    // The docs are ours, built into the binary: their HTML is trusted.
    // The page's CSP (web::chrome) still refuses any script in them.
    let (html, _) = render("<b>bold</b>", Home::Top);
    assert!(html.contains("<b>bold</b>"));
}

#[test]
fn links_between_pages_lead_to_the_served_pages() {
    let cases = [
        (
            Home::Top,
            "docs/egress.md#self-hosted-receivers",
            Some("/docs/egress#self-hosted-receivers"),
        ),
        (Home::Docs, "configuration.md", Some("/docs/configuration")),
        (
            Home::Docs,
            "../README.md#two-commands",
            Some("/readme#two-commands"),
        ),
        (Home::Docs, "#errors", Some("#errors")),
        (
            Home::Docs,
            "https://www.standardwebhooks.com",
            Some("https://www.standardwebhooks.com"),
        ),
        (Home::Docs, "../examples/receivers/README.md", None),
        (Home::Top, "docs/no-such-page.md", None),
        (Home::Docs, "../../outside.md", None),
    ];
    for (home, link, served) in cases {
        assert_eq!(
            served_link(home, link).as_deref(),
            served,
            "{link} from {home:?}"
        );
    }
}

#[test]
fn a_link_to_a_file_the_instance_does_not_serve_becomes_its_text() {
    let (html, _) = render(
        "See [the receivers](../examples/receivers/) and [egress](egress.md).",
        Home::Docs,
    );
    assert!(html.contains("See the receivers and"), "{html}");
    assert!(
        html.contains(r#"<a href="/docs/egress">egress</a>"#),
        "{html}"
    );
}

#[test]
fn every_markdown_file_in_docs_is_a_served_page_and_every_page_is_a_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("docs/ is readable")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix(".md")?.to_string())
        })
        .collect();
    files.sort();
    let mut served: Vec<String> = PAGES.iter().map(|p| p.name.to_string()).collect();
    served.sort();
    assert_eq!(files, served, "docs/*.md and web::docs::PAGES");
}

#[test]
fn every_page_opens_with_a_title() {
    for page in PAGES {
        assert!(
            page.markdown.starts_with("# ") && !page.title().is_empty(),
            "docs/{}.md opens with a `# ` heading",
            page.name
        );
    }
}

#[test]
fn the_shipped_readme_has_the_sections_the_home_page_links() {
    let (_, sections) = render(README, Home::Top);
    let anchors: Vec<&str> = sections.iter().map(|s| s.anchor.as_str()).collect();
    for wanted in [
        "two-commands",
        "a-first-verified-webhook",
        "the-delivery-contract",
        "documentation",
    ] {
        assert!(anchors.contains(&wanted), "{wanted} in {anchors:?}");
    }
}
