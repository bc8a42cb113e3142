//! Loading a catalog: read each `<type>.json`, compile every schema, check
//! every example against its own version and every `compatible_with` claim
//! against the example. Any failure names the file and the JSON pointer.

use std::{collections::BTreeMap, path::Path};

use super::{Catalog, EventType, Version, file::TypeFile, project::project};

/// Why a catalog does not load: the file, where in it, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {problem}", if pointer.is_empty() { String::new() } else { format!(" at {pointer}") })]
pub struct CatalogError {
    pub file: String,
    /// A JSON pointer into the file (empty for the file as a whole).
    pub pointer: String,
    pub problem: String,
}

fn error(file: &str, pointer: impl Into<String>, problem: impl Into<String>) -> CatalogError {
    CatalogError {
        file: file.into(),
        pointer: pointer.into(),
        problem: problem.into(),
    }
}

/// Loads every `*.json` file of `dir` (other files are ignored).
pub fn load_dir(dir: &Path) -> Result<Catalog, CatalogError> {
    let shown = dir.display().to_string();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| error(&shown, "", format!("cannot be read as a directory: {e}")))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| error(&shown, "", e.to_string()))?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| error(&path.display().to_string(), "", e.to_string()))?;
        files.push((path.display().to_string(), text));
    }
    load_files(&files)
}

/// Loads a catalog from `(file name, contents)` pairs.
pub fn load_files(files: &[(String, String)]) -> Result<Catalog, CatalogError> {
    let mut types = BTreeMap::new();
    for (name, text) in files {
        check_not_redefining_own_type(name, text)?;
        let t = load_type(name, text)?;
        if types.contains_key(&t.name) {
            return Err(error(
                name,
                "/type",
                format!("`{}` is defined twice", t.name),
            ));
        }
        types.insert(t.name.clone(), t);
    }
    // hookd's own types are always there, as hookd emits them.
    for (name, text) in super::bundled::FILES {
        let own = name.trim_end_matches(".json");
        if OWN_TYPES.contains(&own) && !types.contains_key(own) {
            let t = load_type(name, text)?;
            types.insert(t.name.clone(), t);
        }
    }
    if files.is_empty() {
        return Err(error(
            files.first().map_or("the catalog", |f| &f.0),
            "",
            "the catalog has no event types (no *.json files)",
        ));
    }
    Ok(Catalog {
        types: std::sync::Arc::new(types),
        strict: true,
    })
}

/// The types hookd itself emits: their schemas follow hookd's code, so a
/// catalog directory may leave them out (the bundled ones are added) but not
/// change them.
pub const OWN_TYPES: [&str; 7] = [
    "endpoint.certificate_expiring",
    "endpoint.disabled",
    "endpoint.failing",
    "endpoint.recovered",
    "hookd.incident.opened",
    "hookd.incident.resolved",
    "webhook.test",
];

fn check_not_redefining_own_type(file: &str, text: &str) -> Result<(), CatalogError> {
    let Ok(given) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(()); // reported by load_type, with the parser's position
    };
    let Some(own) = given["type"].as_str().filter(|t| OWN_TYPES.contains(t)) else {
        return Ok(());
    };
    let bundled = super::bundled::FILES
        .iter()
        .find(|(n, _)| n.trim_end_matches(".json") == own)
        .and_then(|(_, t)| serde_json::from_str::<serde_json::Value>(t).ok());
    if bundled.as_ref() == Some(&given) {
        return Ok(());
    }
    Err(error(
        file,
        "/type",
        format!(
            "`{own}` is hookd's own event type and follows hookd's code; remove this file (the bundled definition is used)"
        ),
    ))
}

fn load_type(file: &str, text: &str) -> Result<EventType, CatalogError> {
    let raw: TypeFile = serde_json::from_str(text).map_err(|e| error(file, "", e.to_string()))?;
    let name = raw.event_type;
    if !super::valid_event_type(&name) {
        return Err(error(
            file,
            "/type",
            format!("`{name}` must look like `usage.finalized`: lowercase words joined by dots"),
        ));
    }
    let stem = Path::new(file).file_name().and_then(|f| f.to_str());
    if stem != Some(&format!("{name}.json")) {
        return Err(error(
            file,
            "/type",
            format!("the file of `{name}` must be named `{name}.json`"),
        ));
    }
    for (key, text) in [
        ("/description", &raw.description),
        ("/sensitivity", &raw.sensitivity),
    ] {
        if text.trim().is_empty() {
            return Err(error(file, key, "must not be empty"));
        }
    }
    if raw.versions.is_empty() {
        return Err(error(
            file,
            "/versions",
            "there must be at least one version",
        ));
    }
    let mut versions: Vec<Version> = Vec::with_capacity(raw.versions.len());
    for (i, v) in raw.versions.into_iter().enumerate() {
        let at = |key: &str| format!("/versions/{i}{key}");
        let previous = versions.last().map_or(0, |p| p.version);
        if v.version <= previous {
            return Err(error(
                file,
                at("/version"),
                format!(
                    "versions must be listed in ascending order from 1, each once; {} follows {previous}",
                    v.version
                ),
            ));
        }
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&v.schema)
            .map_err(|e| {
                error(
                    file,
                    format!("{}{}", at("/schema"), e.schema_path().as_str()),
                    format!("the schema does not compile: {e}"),
                )
            })?;
        if let Some(errors) = super::validate::errors(&validator, &v.example) {
            let first = &errors[0];
            return Err(error(
                file,
                format!("{}{}", at("/example"), first.pointer),
                format!("the example fails its own schema: {}", first.message),
            ));
        }
        for (j, older) in v.compatible_with.iter().enumerate() {
            let Some(old) = versions.iter().find(|o| o.version == *older) else {
                return Err(error(
                    file,
                    at(&format!("/compatible_with/{j}")),
                    format!("version {older} is not an earlier version of `{name}`"),
                ));
            };
            let projected = project(&old.schema, &v.example);
            if let Some(errors) = super::validate::errors(&old.validator, &projected) {
                return Err(error(
                    file,
                    at(&format!("/compatible_with/{j}")),
                    format!(
                        "the example projected onto version {older} fails it at {}: {}",
                        errors[0].pointer, errors[0].message
                    ),
                ));
            }
        }
        versions.push(Version {
            version: v.version,
            schema: v.schema,
            example: v.example,
            compatible_with: v.compatible_with,
            validator,
        });
    }
    Ok(EventType {
        name,
        description: raw.description,
        sensitivity: raw.sensitivity,
        deprecated: raw.deprecated,
        versions,
    })
}
