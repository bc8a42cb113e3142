//! Configuration errors in an operator's words: the key, where its value came
//! from (the file and line, the environment variable, or the defaults), what
//! was expected and what was given, and the key that was probably meant.
//! Never a source path or a type name.

use std::{fmt, path::PathBuf};

use figment::error::{Actual, Kind as FigmentKind};

use super::{
    env::NotAKey,
    keys::{Keys, Kind, env_name},
};

/// Where a key's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetBy {
    Defaults,
    File { path: PathBuf, line: Option<usize> },
    Env(String),
}

impl fmt::Display for SetBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetBy::Defaults => f.write_str("the defaults"),
            SetBy::File { path, line: None } => write!(f, "{}", path.display()),
            SetBy::File {
                path,
                line: Some(n),
            } => write!(f, "{}, line {n}", path.display()),
            SetBy::Env(name) => f.write_str(name),
        }
    }
}

/// The key (or section) probably meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suggestion {
    Key(String),
    Section(String),
}

impl Suggestion {
    pub(super) fn key(key: &str) -> Suggestion {
        Suggestion::Key(key.to_string())
    }
    pub(super) fn section(section: &str) -> Suggestion {
        Suggestion::Section(section.to_string())
    }
}

impl fmt::Display for Suggestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Suggestion::Key(key) => write!(f, "`{key}` (`{}`)", env_name(key)),
            Suggestion::Section(section) => write!(f, "the section `[{section}]`"),
        }
    }
}

/// One thing wrong with the configuration.
#[derive(Debug)]
pub enum Problem {
    /// The file could not be read, or is not TOML.
    File { path: PathBuf, reason: String },
    /// A key in the file that the configuration does not have.
    UnknownKey {
        set_by: SetBy,
        key: String,
        suggestion: Option<Suggestion>,
    },
    /// A `HOOKD_*` variable that names no key.
    UnknownVariable {
        name: String,
        key: String,
        reason: NotAKey,
        /// The nearest key, or a section's keys.
        suggestions: Vec<String>,
    },
    /// A value of the wrong kind, or out of its type's range.
    WrongValue {
        key: String,
        /// Which item of a list, counted from 1.
        item: Option<usize>,
        set_by: SetBy,
        expected: String,
        given: String,
    },
    /// A value the validation refused.
    Invalid {
        key: String,
        set_by: Option<SetBy>,
        problem: String,
    },
}

/// Where to look when no key is near enough to suggest.
const SEE_ALL_KEYS: &str = "; every key is listed, with its default, in config/default.toml";

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::File { path, reason } => write!(f, "{}: {reason}", path.display()),
            Problem::UnknownKey {
                set_by,
                key,
                suggestion,
            } => {
                write!(f, "{set_by}: unknown key `{key}`")?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean {s}?"),
                    None => f.write_str(SEE_ALL_KEYS),
                }
            }
            Problem::UnknownVariable {
                name,
                key,
                reason,
                suggestions,
            } => {
                match reason {
                    NotAKey::NoNesting => write!(
                        f,
                        "{name} names no configuration key: a section and its key are joined \
                         by a double underscore, HOOKD_<SECTION>__<KEY>"
                    )?,
                    NotAKey::NoSuchKey => {
                        write!(f, "{name} names no configuration key (it would be `{key}`)")?
                    }
                    NotAKey::Section => {
                        let keys: Vec<String> = suggestions
                            .iter()
                            .map(|k| Suggestion::key(k).to_string())
                            .collect();
                        return write!(
                            f,
                            "{name} names the section `{key}`, not a key; set one of its keys: {}",
                            keys.join(", ")
                        );
                    }
                }
                match suggestions.first() {
                    Some(s) => write!(f, "; did you mean {}?", Suggestion::key(s)),
                    None => f.write_str(SEE_ALL_KEYS),
                }
            }
            Problem::WrongValue {
                key,
                item,
                set_by,
                expected,
                given,
            } => {
                match item {
                    Some(n) => write!(f, "item {n} of `{key}`")?,
                    None => write!(f, "`{key}`")?,
                }
                write!(f, " from {set_by}: expected {expected}; got {given}")?;
                if let SetBy::Env(name) = set_by
                    && expected.starts_with("a list")
                {
                    write!(
                        f,
                        " (a variable holds a list as a TOML array: {name}='[\"a\", \"b\"]')"
                    )?;
                }
                Ok(())
            }
            Problem::Invalid {
                key,
                set_by: Some(set_by),
                problem,
            } => write!(f, "`{key}` from {set_by}: {problem}"),
            Problem::Invalid {
                key,
                set_by: None,
                problem,
            } => write!(f, "`{key}`: {problem}"),
        }
    }
}

/// The configuration could not be loaded: every problem found, each in
/// words; its `Display` is the whole message.
#[derive(Debug)]
pub struct ConfigError {
    problems: Vec<Problem>,
}

impl ConfigError {
    pub(super) fn new(problems: Vec<Problem>) -> ConfigError {
        ConfigError { problems }
    }

    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Says where each refused value came from.
    pub(super) fn located(mut self, set_by: impl Fn(&str) -> SetBy) -> ConfigError {
        for problem in &mut self.problems {
            if let Problem::Invalid {
                key, set_by: at, ..
            } = problem
                && at.is_none()
            {
                *at = Some(set_by(key));
            }
        }
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "configuration: {one}"),
            many => {
                write!(f, "configuration: {} problems", many.len())?;
                for problem in many {
                    write!(f, "\n  - {}", problem.to_string().replace('\n', "\n    "))?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// A value the validation refuses, before it is known where it came from.
pub(super) fn invalid(key: &'static str, problem: impl Into<String>) -> ConfigError {
    ConfigError::new(vec![Problem::Invalid {
        key: key.to_string(),
        set_by: None,
        problem: problem.into(),
    }])
}

/// A type error from reading the merged configuration, in words.
pub(super) fn from_figment(
    error: figment::Error,
    keys: &Keys,
    set_by: impl Fn(&str) -> SetBy,
) -> Problem {
    let (key, rest) = keys.containing(&error.path);
    let item = rest
        .first()
        .and_then(|i| i.parse::<usize>().ok())
        .map(|i| i + 1);
    let kind = keys.kind(&key).filter(|_| item.is_none());
    let wrong = |expected: String, given: String| Problem::WrongValue {
        item,
        set_by: set_by(&key),
        expected,
        given,
        key: key.clone(),
    };
    let shown = shows_value(&key);
    match error.kind {
        FigmentKind::InvalidType(actual, expected)
        | FigmentKind::InvalidValue(actual, expected) => {
            wrong(expected_words(&expected, kind), given_words(&actual, shown))
        }
        FigmentKind::InvalidLength(n, expected) => {
            wrong(expected_words(&expected, kind), format!("{n} items"))
        }
        FigmentKind::ISizeOutOfRange(n) => wrong("a smaller whole number".into(), n.to_string()),
        FigmentKind::USizeOutOfRange(n) => wrong("a smaller whole number".into(), n.to_string()),
        FigmentKind::UnknownField(field, _) => {
            let key = format!("{key}.{field}");
            Problem::UnknownKey {
                set_by: set_by(&key),
                suggestion: keys.suggest(&key).map(Suggestion::key),
                key,
            }
        }
        FigmentKind::Message(message) => Problem::Invalid {
            set_by: Some(set_by(&key)),
            key,
            problem: message,
        },
        other => Problem::Invalid {
            set_by: Some(set_by(&key)),
            problem: match other {
                FigmentKind::MissingField(field) => format!("`{field}` is missing"),
                _ => format!("expected {}", kind.map_or("another value", Kind::words)),
            },
            key,
        },
    }
}

/// Secrets and URLs (which may carry a password) are never echoed back.
fn shows_value(key: &str) -> bool {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    !["secret", "key", "password", "url"]
        .iter()
        .any(|word| leaf.contains(word))
}

/// What serde expected, in words: its names for primitive types are Rust's,
/// so anything not in this table is said from the key's kind instead.
fn expected_words(expected: &str, kind: Option<Kind>) -> String {
    let range = |max: u64| format!("a whole number from 0 to {max}");
    match expected {
        "u8" => range(u8::MAX.into()),
        "u16" => range(u16::MAX.into()),
        "u32" => range(u32::MAX.into()),
        "u64" | "u128" | "usize" => "a whole number (0 or more)".into(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a string" => "text (in quotes in a TOML file)".into(),
        "a character" => "one character".into(),
        "a sequence" => Kind::List.words().into(),
        _ => kind
            .filter(|k| *k != Kind::Unset)
            .map_or("a value of another kind", Kind::words)
            .into(),
    }
}

/// What was given, in words; `show`: with its value.
fn given_words(actual: &Actual, show: bool) -> String {
    let text = |s: String| match s.chars().count() {
        0..=60 => format!("{s:?}"),
        _ => format!("{:?}…", s.chars().take(57).collect::<String>()),
    };
    let (hidden, shown) = match actual {
        Actual::Bool(b) => ("a boolean", b.to_string()),
        Actual::Unsigned(n) => ("a number", format!("the number {n}")),
        Actual::Signed(n) => ("a number", format!("the number {n}")),
        Actual::Float(n) => ("a number", format!("the number {n}")),
        Actual::Char(c) => ("text", format!("the text {}", text(c.to_string()))),
        Actual::Str(s) => ("text", format!("the text {}", text(s.clone()))),
        Actual::Seq => return "a list".into(),
        Actual::Map => return "a table".into(),
        Actual::Unit | Actual::Option => return "nothing".into(),
        _ => return "a value of another kind".into(),
    };
    if show { shown } else { hidden.into() }
}
