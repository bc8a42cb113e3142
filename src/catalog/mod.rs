//! The event catalog: every event type hookd accepts, each with its versions,
//! their JSON Schemas (draft 2020-12) and examples. It is configuration: one
//! JSON file per type in a directory (`catalog.path`), the bundled one by
//! default. Loading compiles every schema and checks every example against
//! its own version, so a catalog that starts is a catalog that works.
//!
//! Schemas never reach the network: no remote `$ref` is resolved, at load or
//! ever (the validator is built without any retriever).
//!
//! The schemas also tell which `data.` paths a payload filter may name
//! (`paths`): one no subscribed type holds is refused as a typo.

mod bundled;
mod file;
mod load;
pub mod paths;
pub mod project;
pub mod render;
mod validate;

use std::{collections::BTreeMap, sync::Arc};

use serde::Serialize;
use serde_json::Value;

pub use load::{CatalogError, OWN_TYPES, load_dir, load_files};
pub use paths::{ImpossiblePath, impossible_path};
pub use validate::{DataError, MAX_ERRORS, describe};

/// `usage.finalized`: lowercase words of letters, digits and `_`, joined by dots.
pub fn valid_event_type(t: &str) -> bool {
    t.len() <= 128
        && t.split('.').count() >= 2
        && t.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
}

/// One version of an event type's `data`.
pub struct Version {
    pub version: u32,
    pub schema: Value,
    pub example: Value,
    /// Older versions that this one's payloads project onto (dropping what
    /// the older schema does not name gives a valid older payload).
    pub compatible_with: Vec<u32>,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Version")
            .field("version", &self.version)
            .field("compatible_with", &self.compatible_with)
            .finish_non_exhaustive()
    }
}

/// One event type with its versions, oldest first.
#[derive(Debug)]
pub struct EventType {
    pub name: String,
    pub description: String,
    /// What the payload holds and what it never holds (key material,
    /// prompts), for partners deciding where to keep it.
    pub sensitivity: String,
    pub deprecated: bool,
    pub versions: Vec<Version>,
}

impl EventType {
    pub fn latest(&self) -> &Version {
        // A loaded type has at least one version (checked at load).
        &self.versions[self.versions.len() - 1]
    }

    pub fn version(&self, v: u32) -> Option<&Version> {
        self.versions.iter().find(|x| x.version == v)
    }
}

/// Why an event's `data` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The type is not in the catalog (and the catalog is strict).
    UnknownType,
    /// The type has no such version.
    UnknownVersion { latest: u32 },
    /// `data` fails its version's schema: at most `MAX_ERRORS`, each with
    /// the JSON pointer of the offending value inside `data`.
    InvalidData(Vec<DataError>),
}

/// The loaded catalog; cheap to clone (the types are shared).
#[derive(Debug, Clone)]
pub struct Catalog {
    types: Arc<BTreeMap<String, EventType>>,
    /// Refuse event types the catalog does not name (`catalog.strict`).
    pub strict: bool,
}

impl Catalog {
    /// The catalog bundled with hookd (`config/catalog/`), strict.
    pub fn bundled() -> Arc<Catalog> {
        bundled::get()
    }

    pub fn types(&self) -> impl Iterator<Item = &EventType> {
        self.types.values()
    }

    pub fn get(&self, name: &str) -> Option<&EventType> {
        self.types.get(name)
    }

    /// The same catalog with `strict` set as given.
    pub fn with_strict(&self, strict: bool) -> Catalog {
        Catalog {
            types: self.types.clone(),
            strict,
        }
    }

    /// The version an event of `name` without a `schema_version` gets: the
    /// type's latest, or 1 for a type the catalog does not know.
    pub fn default_version(&self, name: &str) -> u32 {
        self.get(name).map_or(1, |t| t.latest().version)
    }

    /// Checks `data` of an event of type `name` at `version`. A type the
    /// catalog does not know passes only when it is not strict.
    pub fn check(&self, name: &str, version: u32, data: &Value) -> Result<(), Refusal> {
        let Some(t) = self.get(name) else {
            return if self.strict {
                Err(Refusal::UnknownType)
            } else {
                Ok(())
            };
        };
        let Some(v) = t.version(version) else {
            return Err(Refusal::UnknownVersion {
                latest: t.latest().version,
            });
        };
        validate::errors(&v.validator, data).map_or(Ok(()), |e| Err(Refusal::InvalidData(e)))
    }

    /// The published form of the catalog, for `GET /v1/event-types`.
    pub fn published(&self) -> Vec<PublishedType> {
        self.types()
            .map(|t| PublishedType {
                event_type: t.name.clone(),
                description: t.description.clone(),
                sensitivity: t.sensitivity.clone(),
                deprecated: t.deprecated,
                latest_version: t.latest().version,
                schema: t.latest().schema.clone(),
                versions: t
                    .versions
                    .iter()
                    .map(|v| PublishedVersion {
                        version: v.version,
                        schema: v.schema.clone(),
                        example: v.example.clone(),
                        compatible_with: v.compatible_with.clone(),
                    })
                    .collect(),
            })
            .collect()
    }
}

/// An event type as `GET /v1/event-types` shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PublishedType {
    #[serde(rename = "type")]
    pub event_type: String,
    pub description: String,
    pub sensitivity: String,
    pub deprecated: bool,
    /// The version an event gets when its producer names none.
    pub latest_version: u32,
    /// The latest version's JSON Schema (the same as in `versions`).
    #[schema(value_type = Object)]
    pub schema: Value,
    pub versions: Vec<PublishedVersion>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PublishedVersion {
    pub version: u32,
    /// The JSON Schema (draft 2020-12) of `data` at this version.
    #[schema(value_type = Object)]
    pub schema: Value,
    /// A `data` object valid at this version.
    #[schema(value_type = Object)]
    pub example: Value,
    /// Older versions this one projects onto.
    pub compatible_with: Vec<u32>,
}

#[cfg(test)]
mod paths_tests;
#[cfg(test)]
mod tests;
