//! The `--config` file: read, parsed as TOML, checked key by key against the
//! known keys, and able to say on which line it sets a key.

use std::path::{Path, PathBuf};

use figment::{
    providers::{Format, Toml},
    value::{Dict, Value},
};

use super::{
    error::{ConfigError, Problem, SetBy, Suggestion},
    keys::{Keys, Kind},
};

pub(super) struct ConfigFile {
    path: PathBuf,
    text: String,
    pub values: Dict,
}

impl ConfigFile {
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
        let problem = |reason: String| {
            ConfigError::new(vec![Problem::File {
                path: path.to_path_buf(),
                reason,
            }])
        };
        let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => problem("no such file".into()),
            _ => problem(format!("cannot be read: {e}")),
        })?;
        let values = Toml::from_str::<Dict>(&text).map_err(|e| {
            let message = e.to_string();
            let message = message
                .strip_prefix("TOML parse error ")
                .unwrap_or(&message);
            problem(format!("not valid TOML, {}", message.trim_end()))
        })?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            text,
            values,
        })
    }

    /// Every key in the file that the configuration does not have (and not
    /// what lies under it).
    pub fn unknown_keys(&self, keys: &Keys) -> Vec<Problem> {
        fn walk(file: &ConfigFile, prefix: &str, dict: &Dict, keys: &Keys, out: &mut Vec<Problem>) {
            for (name, value) in dict {
                let key = match prefix {
                    "" => name.clone(),
                    _ => format!("{prefix}.{name}"),
                };
                match (keys.kind(&key), value) {
                    (None, value) => out.push(Problem::UnknownKey {
                        set_by: file.set_by(&key),
                        suggestion: match value {
                            Value::Dict(..) => keys.suggest_section(&key).map(Suggestion::section),
                            _ => keys.suggest(&key).map(Suggestion::key),
                        },
                        key,
                    }),
                    (Some(Kind::Section), Value::Dict(_, inner)) => {
                        walk(file, &key, inner, keys, out)
                    }
                    // A value where a section belongs, or anything in a
                    // value: the types say what they expected.
                    (Some(_), _) => {}
                }
            }
        }
        let mut problems = Vec::new();
        walk(self, "", &self.values, keys, &mut problems);
        // In the order of the file, as an editor shows it.
        problems.sort_by_key(|p| match p {
            Problem::UnknownKey {
                set_by: SetBy::File { line, .. },
                ..
            } => line.unwrap_or(usize::MAX),
            _ => usize::MAX,
        });
        problems
    }

    /// Whether the file sets `key` (or something under it).
    pub fn sets(&self, key: &str) -> bool {
        let mut parts = key.split('.');
        let Some(first) = parts.next() else {
            return false;
        };
        let mut value = self.values.get(first);
        for part in parts {
            value = match value {
                Some(Value::Dict(_, d)) => d.get(part),
                _ => None,
            };
        }
        value.is_some()
    }

    pub fn set_by(&self, key: &str) -> SetBy {
        SetBy::File {
            path: self.path.clone(),
            line: line_of(&self.text, key),
        }
    }
}

/// The line (from 1) on which TOML `text` sets the dotted `key`, for the
/// common layouts: `key = …` under its `[section]` header, a dotted
/// `section.key = …`, or the `[section]` header of a section. Best effort: a
/// key inside an inline table is not found.
pub fn line_of(text: &str, key: &str) -> Option<usize> {
    let unquote = |s: &str| {
        s.split('.')
            .map(|p| p.trim().trim_matches(|c| c == '"' || c == '\''))
            .collect::<Vec<_>>()
            .join(".")
    };
    let mut table = String::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let here = if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_start_matches('[');
            let Some((name, _)) = header.split_once(']') else {
                continue;
            };
            table = unquote(name);
            table.clone()
        } else if let Some((lhs, _)) = line.split_once('=')
            && !line.starts_with('#')
        {
            match table.as_str() {
                "" => unquote(lhs),
                t => format!("{t}.{}", unquote(lhs)),
            }
        } else {
            continue;
        };
        if here == key {
            return Some(n + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::line_of;

    const TEXT: &str = r#"# hookd
[http]
listen = "0.0.0.0:80"
 max_body_bytes=5 # trailing
"trust_proxy" = []

[egress]
allow_http = true
log.filter = "debug"
"#;

    #[test]
    fn a_key_is_found_on_its_line_under_its_section() {
        assert_eq!(line_of(TEXT, "http"), Some(2));
        assert_eq!(line_of(TEXT, "http.listen"), Some(3));
        assert_eq!(line_of(TEXT, "http.max_body_bytes"), Some(4));
        assert_eq!(line_of(TEXT, "http.trust_proxy"), Some(5));
        assert_eq!(line_of(TEXT, "egress.allow_http"), Some(8));
        assert_eq!(line_of(TEXT, "egress.log.filter"), Some(9));
    }

    #[test]
    fn a_key_the_text_does_not_set_has_no_line() {
        assert_eq!(line_of(TEXT, "http.allow_http"), None);
        assert_eq!(line_of(TEXT, "listen"), None);
        assert_eq!(line_of("", "http.listen"), None);
    }
}
