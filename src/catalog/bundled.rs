//! The catalog bundled in the binary: `config/catalog/`, compiled once on
//! first use. The tests below hold it to the same checks as any catalog.

use std::sync::{Arc, OnceLock};

use super::Catalog;

macro_rules! bundled_files {
    ($($name:literal),* $(,)?) => {
        &[$((concat!($name, ".json"), include_str!(concat!("../../config/catalog/", $name, ".json")))),*]
    };
}

/// Every file of `config/catalog/`, by name.
pub(super) const FILES: &[(&str, &str)] = bundled_files![
    "api_key.created",
    "api_key.status_changed",
    "balance.threshold_crossed",
    "balance.updated",
    "budget.threshold_crossed",
    "credit.adjustment_posted",
    "customer.created",
    "customer.status_changed",
    "endpoint.certificate_expiring",
    "endpoint.disabled",
    "endpoint.failing",
    "endpoint.recovered",
    "hookd.incident.opened",
    "hookd.incident.resolved",
    "usage.finalized",
    "webhook.test",
];

pub(super) fn get() -> Arc<Catalog> {
    static BUNDLED: OnceLock<Arc<Catalog>> = OnceLock::new();
    BUNDLED
        .get_or_init(|| {
            let files: Vec<(String, String)> = FILES
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect();
            match super::load_files(&files) {
                Ok(c) => Arc::new(c),
                // The tests load it too: a broken bundle never ships.
                Err(e) => panic!("the bundled catalog is invalid: {e}"),
            }
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::FILES;
    use crate::catalog::OWN_TYPES;

    /// The pointers of object schemas under `schema` that leave
    /// `additionalProperties` open.
    fn open_objects(schema: &Value, at: &str, found: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                let is_object = map.get("type") == Some(&Value::from("object"));
                if is_object && map.get("additionalProperties") != Some(&Value::Bool(false)) {
                    found.push(if at.is_empty() { "/".into() } else { at.into() });
                }
                for (k, v) in map {
                    open_objects(v, &format!("{at}/{k}"), found);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    open_objects(v, &format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_bundled_reseller_schema_closes_its_objects_at_every_level() {
        let catalog = super::get();
        for t in catalog
            .types()
            .filter(|t| !OWN_TYPES.contains(&t.name.as_str()))
        {
            for v in &t.versions {
                let mut open = Vec::new();
                open_objects(&v.schema, "", &mut open);
                assert!(
                    open.is_empty(),
                    "{} v{} leaves objects open at {open:?}: set additionalProperties to false",
                    t.name,
                    v.version
                );
            }
        }
    }

    #[test]
    fn a_field_added_to_a_closed_schema_comes_in_a_version_that_projects_onto_the_old_one() {
        let catalog = super::get();
        let usage = catalog.get("usage.finalized").expect("bundled");
        let (v1, v2) = (usage.version(1).expect("v1"), usage.version(2).expect("v2"));
        assert!(
            catalog.check("usage.finalized", 1, &v2.example).is_err(),
            "v1 is closed: v2's new fields are not v1 data"
        );
        let projected = crate::catalog::project::project(&v1.schema, &v2.example);
        assert_eq!(
            catalog.check("usage.finalized", 1, &projected),
            Ok(()),
            "projected onto v1 (what an endpoint pinned to v1 gets) it is v1 data"
        );
        assert_eq!(v2.compatible_with, [1]);
    }

    #[test]
    fn a_bundled_reseller_type_refuses_a_field_its_schema_does_not_declare() {
        let catalog = super::get();
        let mut data = catalog
            .get("balance.updated")
            .expect("bundled")
            .latest()
            .example
            .clone();
        data["note"] = Value::from("not declared");
        let refusal = catalog
            .check("balance.updated", 1, &data)
            .expect_err("refused");
        let crate::catalog::Refusal::InvalidData(errors) = refusal else {
            panic!("refused as invalid data, not {refusal:?}");
        };
        assert_eq!(
            errors
                .iter()
                .map(|e| e.pointer.as_str())
                .collect::<Vec<_>>(),
            ["/note"],
            "the error points to the undeclared field: {errors:?}"
        );
    }

    #[test]
    fn the_bundled_catalog_loads_and_lists_every_file_of_its_directory() {
        let catalog = super::get();
        let on_disk = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/config/catalog"))
            .expect("config/catalog exists")
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))
            })
            .count();
        assert_eq!(
            FILES.len(),
            on_disk,
            "bundled.rs must list every file in config/catalog"
        );
        assert_eq!(catalog.types().count(), FILES.len());
    }
}
