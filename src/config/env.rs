//! `HOOKD_*` environment variables: each one sets a known key, is one of the
//! few variables that are not configuration (tolerated by name), or is an
//! error that names it. Nothing starting with `HOOKD_` is ignored in silence.

use figment::value::Value;

use super::keys::{Keys, Kind, key_of_env};

/// `HOOKD_*` variables that are not configuration keys, read by other tools
/// that share the prefix; `hookd` tolerates them so a shell set up for those
/// tools can still start it. A name ending in `*` is a prefix.
///
/// - `HOOKD_TEST_*`: the test suite's switches (`HOOKD_TEST_PG=skip`,
///   `HOOKD_TEST_PG_DIR`, `HOOKD_TEST_BROWSER`, `HOOKD_TEST_CHROMIUM`, and one
///   per example receiver's toolchain);
/// - `HOOKD_CI_*`: the CI scripts' own settings;
/// - `HOOKD_SCREENSHOTS`: the browser tests save their screenshots;
/// - `HOOKD_BIN`: the benchmark and CI scripts run this binary;
/// - `HOOKD_URL`, `HOOKD_PARTNER_KEY`: the example receivers' reconciliation
///   script (docs/receiving.md) calls hookd's API with them.
pub const NOT_CONFIGURATION: &[&str] = &[
    "HOOKD_TEST_*",
    "HOOKD_CI_*",
    "HOOKD_SCREENSHOTS",
    "HOOKD_BIN",
    "HOOKD_URL",
    "HOOKD_PARTNER_KEY",
];

/// Whether `name` is one of the [`NOT_CONFIGURATION`] variables.
pub fn is_not_configuration(name: &str) -> bool {
    NOT_CONFIGURATION
        .iter()
        .any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *allowed,
        })
}

/// What one environment variable means for the configuration.
#[derive(Debug, PartialEq)]
pub enum Variable {
    /// Not ours: no `HOOKD_` prefix, or a tolerated tool's variable.
    Ignored,
    /// Sets `key` to `value`.
    Sets { key: String, value: Value },
    /// Names no key: the key it would be, and why it is none.
    Unknown { key: String, reason: NotAKey },
}

/// Why a `HOOKD_*` variable names no key.
#[derive(Debug, PartialEq)]
pub enum NotAKey {
    /// No `__`: sections and keys are joined by a double underscore.
    NoNesting,
    /// A section rather than a key.
    Section,
    /// No such key.
    NoSuchKey,
}

/// Reads one variable against the known keys.
pub fn classify(name: &str, text: &str, keys: &Keys) -> Variable {
    let Some(key) = key_of_env(name) else {
        return Variable::Ignored;
    };
    if is_not_configuration(name) {
        return Variable::Ignored;
    }
    let reason = match keys.kind(&key) {
        Some(Kind::Section) => NotAKey::Section,
        Some(kind) => {
            return Variable::Sets {
                value: value_of(text, kind),
                key,
            };
        }
        None if !name.contains("__") => NotAKey::NoNesting,
        None => NotAKey::NoSuchKey,
    };
    Variable::Unknown { key, reason }
}

/// A variable's text as a value: read like TOML (`true`, `8`, `["a", "b"]`),
/// except that a text key takes the text as written, so a passphrase of
/// digits stays the passphrase and is not read as a number.
fn value_of(text: &str, kind: Kind) -> Value {
    let parsed: Value = text.parse().unwrap_or_else(|e| match e {});
    match (kind, &parsed) {
        (Kind::Text, Value::String(..)) if text.starts_with('"') => parsed,
        (Kind::Text, _) => Value::from(text.to_string()),
        _ => parsed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Keys {
        use figment::providers::{Format, Toml};
        let value: Value = figment::Figment::from(Toml::string(
            r#"
            egress = { allow_http = false, allowed_ports = [443] }
            secrets = { master_key = "" }
            "#,
        ))
        .extract()
        .expect("a table");
        Keys::of(&value)
    }

    #[test]
    fn a_variable_with_a_double_underscore_sets_its_key() {
        let k = keys();
        assert_eq!(
            classify("HOOKD_EGRESS__ALLOW_HTTP", "true", &k),
            Variable::Sets {
                key: "egress.allow_http".into(),
                value: Value::from(true)
            }
        );
        let Variable::Sets { value, .. } = classify("HOOKD_EGRESS__ALLOWED_PORTS", "[80, 443]", &k)
        else {
            panic!("a list sets its key")
        };
        assert!(matches!(value, Value::Array(_, items) if items.len() == 2));
    }

    #[test]
    fn a_text_key_takes_the_text_as_written() {
        let k = keys();
        let digits = "12345678901234567890123456789012345";
        assert_eq!(
            classify("HOOKD_SECRETS__MASTER_KEY", digits, &k),
            Variable::Sets {
                key: "secrets.master_key".into(),
                value: Value::from(digits.to_string())
            },
            "a passphrase of digits is not turned into a number"
        );
        assert_eq!(
            classify("HOOKD_SECRETS__MASTER_KEY", "\"quoted\"", &k),
            Variable::Sets {
                key: "secrets.master_key".into(),
                value: Value::from("quoted".to_string())
            },
            "a TOML string is unquoted, as before"
        );
    }

    #[test]
    fn a_variable_that_names_no_key_says_why() {
        let k = keys();
        let unknown = |name| match classify(name, "x", &k) {
            Variable::Unknown { reason, .. } => Some(reason),
            _ => None,
        };
        assert_eq!(unknown("HOOKD_EGRESS_ALLOW_HTTP"), Some(NotAKey::NoNesting));
        assert_eq!(unknown("HOOKD_EGRESS"), Some(NotAKey::Section));
        assert_eq!(
            unknown("HOOKD_EGRESS__ALLOW_HTTPS"),
            Some(NotAKey::NoSuchKey)
        );
        assert_eq!(
            unknown("HOOKD_EGRESS__ALLOW_HTTP__X"),
            Some(NotAKey::NoSuchKey)
        );
    }

    #[test]
    fn the_variables_of_other_tools_are_tolerated_and_nothing_else() {
        let k = keys();
        for name in [
            "HOOKD_TEST_PG",
            "HOOKD_TEST_PG_DIR",
            "HOOKD_TEST_BROWSER",
            "HOOKD_CI_ACCEPTED_URL",
            "HOOKD_SCREENSHOTS",
            "HOOKD_BIN",
            "HOOKD_URL",
            "HOOKD_PARTNER_KEY",
            "PATH",
            "RUST_LOG",
        ] {
            assert_eq!(classify(name, "1", &k), Variable::Ignored, "{name}");
        }
        for name in [
            "HOOKD_TEST",
            "HOOKD_SCREENSHOT",
            "HOOKD_BINARY",
            "HOOKD_URLS",
        ] {
            assert!(
                matches!(classify(name, "1", &k), Variable::Unknown { .. }),
                "{name} is not tolerated: only the listed names and prefixes are"
            );
        }
    }
}
