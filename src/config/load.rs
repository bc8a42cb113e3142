//! Loading: the compiled-in defaults, then the file, then `HOOKD_*`
//! variables; every unknown key or variable reported at once, then the
//! types, then the validation, each problem said with where it came from.

use std::{collections::BTreeMap, path::Path, sync::OnceLock};

use figment::{
    Figment,
    providers::{Format, Serialized, Toml},
    value::Value,
};

use super::{
    Config, ConfigError, DEFAULT_TOML, Raw,
    env::{self, Variable},
    error::{self, Problem, SetBy},
    file::ConfigFile,
    keys::Keys,
};

/// The known keys, read once from the raw types serialized with the defaults
/// (an optional key unset by default is there too, as empty).
pub(super) fn known_keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let value = Figment::from(Toml::string(DEFAULT_TOML))
            .extract::<Raw>()
            .map_err(|e| e.to_string())
            .and_then(|raw| Value::serialize(&raw).map_err(|e| e.to_string()));
        match value {
            Ok(value) => Keys::of(&value),
            Err(e) => panic!("the compiled-in defaults are invalid: {e}"),
        }
    })
}

impl Config {
    /// Defaults, then `file` if given, then `HOOKD_<SECTION>__<KEY>` variables
    /// from `env` (passed in so tests never touch the process environment).
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let keys = known_keys();
        let mut figment = Figment::from(Toml::string(DEFAULT_TOML));
        let mut problems = Vec::new();

        let file = match file {
            None => None,
            Some(path) => Some(ConfigFile::read(path)?),
        };
        if let Some(file) = &file {
            problems.extend(file.unknown_keys(keys));
            figment = figment.merge(Serialized::defaults(&file.values));
        }

        // Sorted, so the same environment always gives the same message.
        let env: BTreeMap<String, String> = env.into_iter().collect();
        let otel: BTreeMap<String, String> = env
            .iter()
            .filter(|(name, _)| name.starts_with("OTEL_"))
            .map(|(name, text)| (name.clone(), text.clone()))
            .collect();
        let mut from_env = BTreeMap::new();
        for (name, text) in env {
            match env::classify(&name, &text, keys) {
                Variable::Ignored => {}
                Variable::Sets { key, value } => {
                    figment = figment.merge(Serialized::default(&key, value));
                    from_env.insert(key, name);
                }
                Variable::Unknown { key, reason } => {
                    let suggestions = match reason {
                        env::NotAKey::Section => keys.children(&key).map(String::from).collect(),
                        _ => keys.suggest(&key).map(String::from).into_iter().collect(),
                    };
                    problems.push(Problem::UnknownVariable {
                        name,
                        key,
                        reason,
                        suggestions,
                    });
                }
            }
        }
        if !problems.is_empty() {
            return Err(ConfigError::new(problems));
        }

        let set_by = |key: &str| match (from_env.get(key), &file) {
            (Some(name), _) => SetBy::Env(name.clone()),
            (None, Some(file)) if file.sets(key) => file.set_by(key),
            _ => SetBy::Defaults,
        };
        let raw: Raw = figment.extract().map_err(|e| {
            ConfigError::new(
                e.into_iter()
                    .map(|e| error::from_figment(e, keys, set_by))
                    .collect(),
            )
        })?;
        let at_default = |key: &str| matches!(set_by(key), SetBy::Defaults);
        let fallbacks = super::telemetry::Fallbacks {
            vars: &otel,
            at_default: &at_default,
        };
        raw.validate(&fallbacks).map_err(|e| e.located(set_by))
    }

    /// The configuration from the compiled-in defaults alone.
    pub fn defaults() -> Config {
        match Config::load(None, std::iter::empty()) {
            Ok(c) => c,
            Err(e) => panic!("the compiled-in defaults are invalid: {e}"),
        }
    }
}
