//! The keys the configuration accepts, read off the raw configuration types
//! themselves (their defaults, serialized), so a new field is a known key with
//! no second list to update; and each key's environment variable.

use std::collections::BTreeMap;

use figment::value::{Num, Value};

/// What a key holds, in the words an error uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Whole,
    Decimal,
    Bool,
    List,
    /// A section: a table of known keys.
    Section,
    /// A table whose keys are not fixed (none today); anything under it is
    /// left to the types to judge.
    Table,
    /// Unset by default (an optional key); the types say what it takes.
    Unset,
}

impl Kind {
    fn of(value: &Value) -> Kind {
        match value {
            Value::String(..) | Value::Char(..) => Kind::Text,
            Value::Bool(..) => Kind::Bool,
            Value::Num(_, Num::F32(_) | Num::F64(_)) => Kind::Decimal,
            Value::Num(..) => Kind::Whole,
            Value::Array(..) => Kind::List,
            Value::Dict(_, d) if d.is_empty() => Kind::Table,
            Value::Dict(..) => Kind::Section,
            Value::Empty(..) => Kind::Unset,
        }
    }

    /// What a value of this kind looks like, for "expected …".
    pub fn words(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Whole => "a whole number",
            Kind::Decimal => "a number",
            Kind::Bool => "true or false",
            Kind::List => "a list like [\"a\", \"b\"]",
            Kind::Section => "a section of keys",
            Kind::Table => "a table",
            Kind::Unset => "a value",
        }
    }
}

/// Every known dotted key (`http.listen`) and section (`http`), with its kind.
#[derive(Debug)]
pub struct Keys(BTreeMap<String, Kind>);

impl Keys {
    /// The keys of a configuration serialized whole (every field present).
    pub fn of(value: &Value) -> Keys {
        fn walk(prefix: &str, value: &Value, keys: &mut BTreeMap<String, Kind>) {
            let Value::Dict(_, dict) = value else { return };
            for (name, child) in dict {
                let key = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                keys.insert(key.clone(), Kind::of(child));
                walk(&key, child, keys);
            }
        }
        let mut keys = BTreeMap::new();
        walk("", value, &mut keys);
        Keys(keys)
    }

    pub fn kind(&self, key: &str) -> Option<Kind> {
        self.0.get(key).copied()
    }

    /// Keys that hold a value (not sections), in order.
    pub fn leaves(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter(|(_, kind)| **kind != Kind::Section)
            .map(|(key, _)| key.as_str())
    }

    /// The keys directly in `section` (`""`: the sections).
    pub fn children<'k>(&'k self, section: &'k str) -> impl Iterator<Item = &'k str> {
        self.0.keys().map(String::as_str).filter(move |key| {
            let rest = match section {
                "" => Some(*key),
                _ => key.strip_prefix(section).and_then(|r| r.strip_prefix('.')),
            };
            rest.is_some_and(|rest| !rest.contains('.'))
        })
    }

    /// The known key a path from a type error lies in: `egress.allowed_ports`
    /// for `egress.allowed_ports.0` (an item of the list).
    pub fn containing<'p>(&self, path: &'p [String]) -> (String, &'p [String]) {
        for n in (1..=path.len()).rev() {
            let key = path[..n].join(".");
            if self.0.contains_key(&key) {
                return (key, &path[n..]);
            }
        }
        (path.join("."), &[])
    }

    /// The known key nearest to `given`, if it looks like a typo of one.
    pub fn suggest(&self, given: &str) -> Option<&str> {
        super::suggest::nearest(given, self.leaves())
    }

    /// The known section nearest to `given`, if it looks like a typo of one.
    pub fn suggest_section(&self, given: &str) -> Option<&str> {
        let sections = self
            .0
            .iter()
            .filter(|(_, kind)| **kind == Kind::Section)
            .map(|(key, _)| key.as_str());
        super::suggest::nearest(given, sections)
    }
}

/// The environment variable that sets `key`: `http.listen` →
/// `HOOKD_HTTP__LISTEN`.
pub fn env_name(key: &str) -> String {
    format!("HOOKD_{}", key.to_ascii_uppercase().replace('.', "__"))
}

/// The key an environment variable names: `HOOKD_HTTP__LISTEN` →
/// `http.listen`; `None` without the `HOOKD_` prefix.
pub fn key_of_env(name: &str) -> Option<String> {
    let rest = name.strip_prefix("HOOKD_")?;
    Some(rest.to_ascii_lowercase().replace("__", "."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Keys {
        use figment::{
            Figment,
            providers::{Format, Toml},
            value::Empty,
        };
        let mut value: Value = Figment::from(Toml::string(
            r#"
            http = { listen = "127.0.0.1:8080", trust_proxy = [], max_connections = 5 }
            delivery = { jitter = 0.2 }
            log = { filter = "info", json = false }
            "#,
        ))
        .extract()
        .expect("a table");
        // An optional key unset by default serializes as empty.
        if let Value::Dict(_, sections) = &mut value
            && let Some(Value::Dict(_, delivery)) = sections.get_mut("delivery")
        {
            delivery.insert("max_connections".into(), Empty::None.into());
        }
        Keys::of(&value)
    }

    #[test]
    fn every_key_and_section_is_known_with_its_kind() {
        let k = keys();
        assert_eq!(k.kind("http"), Some(Kind::Section));
        assert_eq!(k.kind("http.listen"), Some(Kind::Text));
        assert_eq!(k.kind("http.trust_proxy"), Some(Kind::List));
        assert_eq!(k.kind("http.max_connections"), Some(Kind::Whole));
        assert_eq!(k.kind("delivery.jitter"), Some(Kind::Decimal));
        assert_eq!(k.kind("delivery.max_connections"), Some(Kind::Unset));
        assert_eq!(k.kind("log.json"), Some(Kind::Bool));
        assert_eq!(k.kind("http.listn"), None);
        assert!(!k.leaves().any(|key| key == "http"), "a section is no leaf");
        assert_eq!(
            k.children("log").collect::<Vec<_>>(),
            ["log.filter", "log.json"]
        );
        assert_eq!(
            k.children("").collect::<Vec<_>>(),
            ["delivery", "http", "log"]
        );
    }

    #[test]
    fn a_path_into_a_list_lies_in_the_list_key() {
        let k = keys();
        let path = ["http", "trust_proxy", "0"].map(String::from);
        let (key, rest) = k.containing(&path);
        assert_eq!(key, "http.trust_proxy");
        assert_eq!(rest, ["0".to_string()]);
    }

    #[test]
    fn keys_and_environment_variables_map_both_ways() {
        assert_eq!(env_name("egress.allow_http"), "HOOKD_EGRESS__ALLOW_HTTP");
        assert_eq!(
            key_of_env("HOOKD_EGRESS__ALLOW_HTTP").as_deref(),
            Some("egress.allow_http")
        );
        assert_eq!(
            key_of_env("HOOKD_EGRESS_ALLOW_HTTP").as_deref(),
            Some("egress_allow_http")
        );
        assert_eq!(key_of_env("PATH"), None);
    }
}
