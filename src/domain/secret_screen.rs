//! The secret screen: finds key material and credentials in an event's
//! `data` before it is stored, so a payload can never carry a full API key,
//! a provider credential or a token to every subscribed receiver. Pure:
//! rules and `data` in, findings (a pointer and a rule's name, never the
//! value) out.
//!
//! Two kinds of rule: patterns for the shapes of common keys and tokens,
//! matched against every string in `data`; and a high-entropy rule for
//! strings under secret-like names (`api_key`, `client_secret`, `password`).
//! Operators add patterns and allow fields where a match is legitimate.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// The most findings reported for one event.
pub const MAX_FINDINGS: usize = 10;

/// The high-entropy rule's name.
pub const ENTROPY_RULE: &str = "high-entropy-secret";

/// The high-entropy rule looks only at strings at least this long: a masked
/// prefix (`sk_live_ab12`) or a short code stays below it.
pub const MIN_SECRET_CHARS: usize = 20;

/// ... and with at least this many bits of Shannon entropy per character:
/// random hex (about 3.7 and more) and base62 or base64 keys (above 4) reach
/// it, repeated or word-like text mostly does not.
pub const MIN_BITS_PER_CHAR: f64 = 3.5;

/// The bundled patterns: a name (what a refusal says) and a regex.
pub const DEFAULT_RULES: &[(&str, &str)] = &[
    // Stripe-style secret and restricted keys; a masked prefix is shorter.
    (
        "payment-provider-key",
        r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}",
    ),
    // OpenAI- and Anthropic-style keys (`sk-…`, `sk-proj-…`, `sk-ant-…`).
    ("ai-provider-key", r"\bsk-[A-Za-z0-9_-]{20,}"),
    ("aws-access-key-id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("slack-token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    (
        "json-web-token",
        r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
    ),
    ("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    ("bearer-token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"),
];

/// A named pattern.
#[derive(Debug, Clone)]
pub struct Rule {
    pub name: String,
    pattern: Regex,
}

impl Rule {
    pub fn new(name: &str, pattern: &str) -> Result<Rule, regex::Error> {
        Ok(Rule {
            name: name.to_string(),
            pattern: Regex::new(pattern)?,
        })
    }
}

/// A field where a match is legitimate: `balance.updated:/data/reference`.
/// The type may be `*` (every type), and a pointer segment `*` matches any
/// one key or array index (`/data/lines/*/token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    event_type: String,
    /// The segments after `/data`.
    segments: Vec<String>,
}

impl Allowed {
    pub fn parse(text: &str) -> Result<Allowed, String> {
        let shape = "must look like `balance.updated:/data/field` (a type or `*`, a colon, a JSON pointer into data)";
        let (event_type, pointer) = text.split_once(':').ok_or(shape)?;
        if event_type != "*" && !crate::catalog::valid_event_type(event_type) {
            return Err(format!("`{event_type}` is not an event type; {shape}"));
        }
        let rest = pointer
            .strip_prefix("/data/")
            .filter(|r| !r.is_empty())
            .ok_or_else(|| format!("`{pointer}` does not point into data; {shape}"))?;
        let segments = rest
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        Ok(Allowed {
            event_type: event_type.to_string(),
            segments,
        })
    }

    fn covers(&self, event_type: &str, path: &[String]) -> bool {
        (self.event_type == "*" || self.event_type == event_type)
            && self.segments.len() == path.len()
            && self
                .segments
                .iter()
                .zip(path)
                .all(|(a, p)| a == "*" || a == p)
    }
}

/// Where a secret was found: a JSON pointer inside `data` and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub pointer: String,
    pub rule: String,
}

/// The screen as configured.
#[derive(Debug, Clone)]
pub struct SecretScreen {
    enabled: bool,
    rules: Vec<Rule>,
    allowed: Vec<Allowed>,
}

impl Default for SecretScreen {
    fn default() -> Self {
        SecretScreen::new(Vec::new(), Vec::new())
    }
}

impl SecretScreen {
    /// The bundled rules, then `extra`, with `allowed` exempt.
    pub fn new(extra: Vec<Rule>, allowed: Vec<Allowed>) -> SecretScreen {
        let mut rules: Vec<Rule> = DEFAULT_RULES
            .iter()
            .map(|(name, pattern)| Rule::new(name, pattern).expect("the bundled rules compile"))
            .collect();
        rules.extend(extra);
        SecretScreen {
            enabled: true,
            rules,
            allowed,
        }
    }

    /// A screen that finds nothing (`payload.secret_screen = false`).
    pub fn off() -> SecretScreen {
        SecretScreen {
            enabled: false,
            rules: Vec::new(),
            allowed: Vec::new(),
        }
    }

    /// The default screen, compiled once.
    pub fn bundled() -> &'static SecretScreen {
        static BUNDLED: OnceLock<SecretScreen> = OnceLock::new();
        BUNDLED.get_or_init(SecretScreen::default)
    }

    /// The secrets in `data` of an event of `event_type`, at most
    /// `MAX_FINDINGS`, in document order.
    pub fn screen(&self, event_type: &str, data: &Value) -> Vec<Finding> {
        let mut found = Vec::new();
        if self.enabled {
            self.walk(event_type, data, None, &mut Vec::new(), &mut found);
        }
        found
    }

    fn walk(
        &self,
        event_type: &str,
        value: &Value,
        name: Option<&str>,
        path: &mut Vec<String>,
        found: &mut Vec<Finding>,
    ) {
        if found.len() >= MAX_FINDINGS {
            return;
        }
        match value {
            Value::Object(fields) => {
                for (k, v) in fields {
                    path.push(k.clone());
                    self.walk(event_type, v, Some(k), path, found);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    path.push(i.to_string());
                    // An item is named by the field that holds the array.
                    self.walk(event_type, v, name, path, found);
                    path.pop();
                }
            }
            Value::String(text) => {
                let Some(rule) = self.rule_for(text, name) else {
                    return;
                };
                if !self.allowed.iter().any(|a| a.covers(event_type, path)) {
                    found.push(Finding {
                        pointer: pointer(path),
                        rule: rule.to_string(),
                    });
                }
            }
            _ => {}
        }
    }

    /// The first rule `text`, under the field `name`, breaks.
    fn rule_for(&self, text: &str, name: Option<&str>) -> Option<&str> {
        if let Some(rule) = self.rules.iter().find(|r| r.pattern.is_match(text)) {
            return Some(&rule.name);
        }
        (name.is_some_and(secret_like_name) && looks_random(text)).then_some(ENTROPY_RULE)
    }
}

/// Whether a field of this name is where a secret would sit: names ending in
/// `key`, `secret`, `token` or `passphrase` (or their plurals), holding `password` or `passwd`,
/// starting with `credential`, or `authorization`/`auth`/`cookie`; case,
/// `_` and `-` aside. `api_key_id` and `key_prefix` are not.
pub fn secret_like_name(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let one = n.strip_suffix('s').unwrap_or(&n);
    ["key", "secret", "token", "passphrase"]
        .iter()
        .any(|end| one.ends_with(end))
        || n.contains("password")
        || n.contains("passwd")
        || n.starts_with("credential")
        || ["authorization", "auth", "cookie"].contains(&n.as_str())
}

/// Whether `text` looks like generated key material: at least
/// `MIN_SECRET_CHARS` characters, no whitespace, letters and digits mixed,
/// and at least `MIN_BITS_PER_CHAR` bits of entropy per character.
pub fn looks_random(text: &str) -> bool {
    text.chars().count() >= MIN_SECRET_CHARS
        && !text.chars().any(char::is_whitespace)
        && text.chars().any(|c| c.is_ascii_digit())
        && text.chars().any(char::is_alphabetic)
        && bits_per_char(text) >= MIN_BITS_PER_CHAR
}

/// Shannon entropy of `text`'s characters, in bits per character.
pub fn bits_per_char(text: &str) -> f64 {
    let mut counts = std::collections::HashMap::<char, usize>::new();
    for c in text.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let total = counts.values().sum::<usize>() as f64;
    counts
        .values()
        .map(|&n| {
            let p = n as f64 / total;
            -p * p.log2()
        })
        .sum()
}

/// The RFC 6901 pointer of `path`.
fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

#[cfg(test)]
#[path = "secret_screen_tests.rs"]
mod tests;
