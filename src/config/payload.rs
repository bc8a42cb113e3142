//! The `[payload]` section: the secret screen ingest runs on every event's
//! `data` (on or off, the operator's extra patterns, the fields allowed to
//! hold what a rule matches), compiled and checked before anything starts.

use serde::{Deserialize, Serialize};

use super::{ConfigError, Problem};
use crate::domain::secret_screen::{Allowed, DEFAULT_RULES, ENTROPY_RULE, Rule, SecretScreen};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPayload {
    secret_screen: bool,
    allow: Vec<String>,
    patterns: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct PayloadConfig {
    /// The screen ingest applies (one that finds nothing when it is off).
    pub screen: SecretScreen,
    pub secret_screen: bool,
    /// As configured: `type:/data/pointer` each.
    pub allow: Vec<String>,
    /// As configured: `name:regex` each.
    pub patterns: Vec<String>,
}

fn invalid(key: String, problem: impl Into<String>) -> ConfigError {
    ConfigError::new(vec![Problem::Invalid {
        key,
        set_by: None,
        problem: problem.into(),
    }])
}

impl RawPayload {
    pub(super) fn validate(self) -> Result<PayloadConfig, ConfigError> {
        let mut rules = Vec::with_capacity(self.patterns.len());
        for (i, text) in self.patterns.iter().enumerate() {
            let key = format!("payload.patterns[{i}]");
            let Some((name, pattern)) = text.split_once(':') else {
                return Err(invalid(
                    key,
                    format!(
                        "`{text}` must be a rule's name, a colon and a regex, like `internal-key:ik_[a-z0-9]{{24}}`"
                    ),
                ));
            };
            let well_named = !name.is_empty()
                && name.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'
                });
            if !well_named {
                return Err(invalid(
                    key,
                    "a rule's name is lowercase letters, digits, `-` and `_`, like internal-key",
                ));
            }
            if name == ENTROPY_RULE || DEFAULT_RULES.iter().any(|(n, _)| *n == name) {
                return Err(invalid(
                    key,
                    format!("`{name}` is a bundled rule's name; choose another"),
                ));
            }
            let rule = Rule::new(name, pattern)
                .map_err(|e| invalid(key, format!("`{name}` is not a valid regex: {e}")))?;
            rules.push(rule);
        }
        let mut allowed = Vec::with_capacity(self.allow.len());
        for (i, text) in self.allow.iter().enumerate() {
            let entry = Allowed::parse(text)
                .map_err(|e| invalid(format!("payload.allow[{i}]"), format!("`{text}` {e}")))?;
            allowed.push(entry);
        }
        let screen = if self.secret_screen {
            SecretScreen::new(rules, allowed)
        } else {
            SecretScreen::off()
        };
        Ok(PayloadConfig {
            screen,
            secret_screen: self.secret_screen,
            allow: self.allow,
            patterns: self.patterns,
        })
    }
}
