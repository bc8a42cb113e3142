//! A scrape read as text: its samples with their labels, its `# TYPE`
//! families, the metrics docs/metrics.md documents, and what counts as a label
//! that names one object.

use std::collections::{BTreeMap, BTreeSet};

/// One sample line of a scrape: its name and its labels.
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
}

/// The sample lines of an OpenMetrics text (labels unescaped enough for ours).
pub fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let (name, rest) = match line.find(['{', ' ']) {
                Some(i) => line.split_at(i),
                None => (line, ""),
            };
            let mut labels = BTreeMap::new();
            if let Some(inner) = rest.strip_prefix('{').and_then(|r| r.split_once('}')) {
                for pair in inner.0.split("\",").filter(|p| !p.is_empty()) {
                    let (key, value) = pair
                        .split_once("=\"")
                        .unwrap_or_else(|| panic!("a label `{pair}` in `{line}`"));
                    labels.insert(key.to_string(), value.trim_end_matches('"').to_string());
                }
            }
            Sample {
                name: name.to_string(),
                labels,
            }
        })
        .collect()
}

/// `# TYPE` lines: family name → type.
pub fn families(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(name, kind)| (name.to_string(), kind.to_string()))
        .collect()
}

/// The family a sample belongs to (`hookd_attempts_total` to `hookd_attempts`).
pub fn family_of<'a>(sample: &str, families: &'a BTreeMap<String, String>) -> Option<&'a str> {
    families
        .keys()
        .filter(|f| {
            sample.strip_prefix(f.as_str()).is_some_and(|suffix| {
                ["", "_total", "_created", "_bucket", "_sum", "_count"].contains(&suffix)
            })
        })
        .max_by_key(|f| f.len())
        .map(String::as_str)
}

/// The metrics `docs/metrics.md` names under "## The metrics": name as
/// written (`hookd_attempts_total`) → its documented labels.
pub fn documented_metrics() -> BTreeMap<String, BTreeSet<String>> {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/metrics.md"))
        .expect("docs/metrics.md is readable");
    let start = page
        .find("\n## The metrics\n")
        .expect("docs/metrics.md has a \"## The metrics\" section");
    let section = &page[start + 1..];
    let paragraph = &section[..section[1..].find("\n## ").map_or(section.len(), |e| e + 1)];
    paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|code| code.starts_with("hookd_"))
        .map(|code| {
            let (name, labels) = code.split_once('{').unwrap_or((code, ""));
            let labels = labels
                .trim_end_matches('}')
                .split(',')
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            (name.to_string(), labels)
        })
        .collect()
}

/// Whether a label value names one object: an id (`evt_…`, a ULID) or a URL.
pub fn looks_like_an_id(value: &str) -> bool {
    const PREFIXES: [&str; 8] = [
        "evt_", "ep_", "ptn_", "dlv_", "del_", "key_", "att_", "ins_",
    ];
    value.contains("://")
        || PREFIXES.iter().any(|p| value.starts_with(p))
        || value
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|token| token.len() == 26 && ulid::Ulid::from_string(token).is_ok())
}

#[test]
fn an_id_a_ulid_or_a_url_looks_like_an_id_and_a_category_does_not() {
    for id in [
        "evt_01J9Z3M6ZK8Y4V2W7Q5R1T0ABC",
        "ptn_acme",
        "01J9Z3M6ZK8Y4V2W7Q5R1T0ABC",
        "http://127.0.0.1:9/hooks",
    ] {
        assert!(looks_like_an_id(id), "{id}");
    }
    for label in [
        "http_status",
        "none",
        "scheduled",
        "failing",
        "+Inf",
        "0.005",
    ] {
        assert!(!looks_like_an_id(label), "{label}");
    }
}
