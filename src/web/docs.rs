//! The documentation as pages of the running instance (`GET /readme`,
//! `GET /docs`, `GET /docs/{page}`), so a newcomer finds the contract, the
//! configuration and the API beside the thing they describe. Headings get
//! GitHub's anchors, so `/readme#the-delivery-contract` reads like a link to
//! the repository; links between the pages lead to the served pages; links
//! to the repository's other files, and images, become their text.

use pulldown_cmark::{CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd, html};

/// The README this binary was built from.
pub const README: &str = include_str!("../../README.md");

/// One page of `docs/`: its name in the URL (the file name without `.md`)
/// and its Markdown.
pub struct Page {
    pub name: &'static str,
    pub markdown: &'static str,
}

macro_rules! pages {
    ($($name:literal),* $(,)?) => {
        &[$(Page { name: $name, markdown: include_str!(concat!("../../docs/", $name, ".md")) }),*]
    };
}

/// Every page of `docs/`, in the order a newcomer reads them.
pub const PAGES: &[Page] = pages![
    "getting-started",
    "delivery",
    "receiving",
    "producing",
    "events",
    "partner-api",
    "ordering",
    "filters",
    "portal",
    "operating",
    "cli",
    "configuration",
    "dashboard",
    "metrics",
    "tracing",
    "cluster",
    "egress",
    "front-door",
    "benchmarks",
    "architecture",
    "contributing",
];

impl Page {
    /// The page's `docs/` entry by name.
    pub fn named(name: &str) -> Option<&'static Page> {
        PAGES.iter().find(|p| p.name == name)
    }

    /// The text of its first heading.
    pub fn title(&self) -> String {
        title(self.markdown)
    }
}

/// The text of the first heading of `markdown` (empty without one).
pub fn title(markdown: &str) -> String {
    let events: Vec<Event> = Parser::new(markdown).collect();
    events
        .iter()
        .position(|e| matches!(e, Event::Start(Tag::Heading { .. })))
        .map(|i| heading_text(&events[i + 1..]))
        .unwrap_or_default()
}

/// Where a document lives in the repository, which decides what its
/// relative links point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// `README.md`, at the top.
    Top,
    /// A page under `docs/`.
    Docs,
}

/// One `##` section: its title and anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub anchor: String,
}

/// The document as HTML, and its `##` sections in order.
pub fn render(markdown: &str, home: Home) -> (String, Vec<Section>) {
    let mut events: Vec<Event> = Parser::new_ext(markdown, Options::ENABLE_TABLES).collect();
    let mut sections = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    for i in 0..events.len() {
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
    }
    let mut out = String::with_capacity(markdown.len() * 2);
    html::push_html(&mut out, served(events, home).into_iter());
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

/// The path a relative link in a document at `home` names, from the
/// repository's top (`../README.md` from `docs/` is `README.md`); `None`
/// for a link that leaves the repository.
fn in_repository(home: Home, link: &str) -> Option<String> {
    let mut parts: Vec<&str> = match home {
        Home::Top => Vec::new(),
        Home::Docs => vec!["docs"],
    };
    for part in link.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Where a link of a document at `home` leads on a running instance:
/// `Some(url)` for the web, for an anchor on the same page and for another
/// served page; `None` for the repository's other files, which the instance
/// does not serve.
pub fn served_link(home: Home, link: &str) -> Option<String> {
    if link.starts_with('#') || link.contains("://") || link.starts_with("mailto:") {
        return Some(link.to_string());
    }
    let (path, anchor) = match link.split_once('#') {
        Some((path, anchor)) => (path, format!("#{anchor}")),
        None => (link, String::new()),
    };
    let target = in_repository(home, path)?;
    if target == "README.md" {
        return Some(format!("/readme{anchor}"));
    }
    let name = target.strip_prefix("docs/")?.strip_suffix(".md")?;
    Page::named(name).map(|p| format!("/docs/{}{anchor}", p.name))
}

/// The events as the instance serves them: links rewritten by
/// `served_link` (or reduced to their text), and each image reduced to its
/// alt text in brackets, since the instance does not serve the
/// repository's files.
fn served(events: Vec<Event>, home: Home) -> Vec<Event> {
    let mut out = Vec::with_capacity(events.len());
    let mut in_image = false;
    // For each open link: whether it was kept (so its end is kept too).
    let mut links: Vec<bool> = Vec::new();
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
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => match served_link(home, &dest_url) {
                Some(url) => {
                    links.push(true);
                    out.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url: url.into(),
                        title,
                        id,
                    }));
                }
                None => links.push(false),
            },
            Event::End(TagEnd::Link) => {
                if links.pop().unwrap_or(false) {
                    out.push(Event::End(TagEnd::Link));
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
