//! The README as a page of the running instance (`GET /readme`), so a
//! newcomer finds the contract, the configuration and the API beside the
//! thing they describe. Headings get GitHub's anchors, so a link to
//! `/readme#configuration` reads like one to the repository; images (the
//! repository's screenshots) become their alt text.

use pulldown_cmark::{CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd, html};

/// The README this binary was built from.
pub const README: &str = include_str!("../../README.md");

/// One `##` section: its title and anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub anchor: String,
}

/// The document as HTML, and its `##` sections in order.
pub fn render(markdown: &str) -> (String, Vec<Section>) {
    let mut events: Vec<Event> = Parser::new_ext(markdown, Options::ENABLE_TABLES).collect();
    let mut sections = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    let mut i = 0;
    while i < events.len() {
        if let Event::Start(Tag::Heading { level, .. }) = &events[i] {
            let level = *level;
            let title = heading_text(&events[i + 1..]);
            let anchor = unique(slug(&title), &mut taken);
            if level == HeadingLevel::H2 {
                sections.push(Section {
                    title: title.clone(),
                    anchor: anchor.clone(),
                });
            }
            events[i] = Event::Start(Tag::Heading {
                level,
                id: Some(CowStr::from(anchor)),
                classes: Vec::new(),
                attrs: Vec::new(),
            });
        }
        i += 1;
    }
    let mut out = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut out, without_images(events).into_iter());
    (out, sections)
}

/// The text of the heading whose content starts `events`.
fn heading_text(events: &[Event]) -> String {
    let mut text = String::new();
    for event in events {
        match event {
            Event::End(TagEnd::Heading(_)) => break,
            Event::Text(t) | Event::Code(t) => text.push_str(t),
            _ => {}
        }
    }
    text
}

/// GitHub's heading anchor: lower case, letters, digits, `-` and `_` kept,
/// spaces to `-`, everything else dropped.
pub fn slug(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// `anchor`, or `anchor-1`, `anchor-2`… when taken, as GitHub numbers them.
fn unique(anchor: String, taken: &mut Vec<String>) -> String {
    let mut candidate = anchor.clone();
    let mut n = 0;
    while taken.contains(&candidate) {
        n += 1;
        candidate = format!("{anchor}-{n}");
    }
    taken.push(candidate.clone());
    candidate
}

/// Each image becomes its alt text in brackets: the instance does not serve
/// the repository's files.
fn without_images(events: Vec<Event>) -> Vec<Event> {
    let mut out = Vec::with_capacity(events.len());
    let mut in_image = false;
    for event in events {
        match event {
            Event::Start(Tag::Image { .. }) => {
                in_image = true;
                out.push(Event::Text("[image: ".into()));
            }
            Event::End(TagEnd::Image) => {
                in_image = false;
                out.push(Event::Text("]".into()));
            }
            Event::Text(t) if in_image => out.push(Event::Text(t)),
            _ if in_image => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_get_githubs_anchors_and_repeats_are_numbered() {
        let (html, sections) =
            render("# hookd\n\n## Try it\n\n## The `serve --dev` mode\n\n## Try it\n");
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
        let (html, _) = render("![The overview](docs/screenshots/overview.png)");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("[image: The overview]"), "{html}");
    }

    #[test]
    fn raw_html_in_the_readme_is_escaped_by_nothing_but_the_csp_forbids_script() {
        // The README is ours, built into the binary: its HTML is trusted.
        // The page's CSP (web::chrome) still refuses any script in it.
        let (html, _) = render("<b>bold</b>");
        assert!(html.contains("<b>bold</b>"));
    }

    #[test]
    fn the_shipped_readme_has_the_sections_the_home_page_links() {
        let (_, sections) = render(README);
        let anchors: Vec<&str> = sections.iter().map(|s| s.anchor.as_str()).collect();
        for wanted in ["try-it", "the-delivery-contract", "running-it"] {
            assert!(anchors.contains(&wanted), "{wanted} in {anchors:?}");
        }
    }
}
