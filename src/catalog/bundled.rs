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
    use super::FILES;

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
