//! The `[catalog]` section: where the event catalog lives and whether types
//! it does not name are refused.

use std::{path::PathBuf, sync::Arc};

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, CatalogError};

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCatalog {
    path: String,
    strict: bool,
}

#[derive(Debug, Clone)]
pub struct CatalogConfig {
    /// A directory of `<type>.json` files; `None` for the bundled catalog.
    pub path: Option<PathBuf>,
    /// Refuse event types the catalog does not name.
    pub strict: bool,
}

impl RawCatalog {
    pub(super) fn validate(self) -> CatalogConfig {
        CatalogConfig {
            path: (!self.path.trim().is_empty()).then(|| PathBuf::from(self.path)),
            strict: self.strict,
        }
    }
}

impl CatalogConfig {
    /// Loads the configured catalog: every schema compiled, every example
    /// checked, or the error naming the file and the JSON pointer.
    pub fn load(&self) -> Result<Arc<Catalog>, CatalogError> {
        let catalog = match &self.path {
            None => Catalog::bundled().with_strict(self.strict),
            Some(dir) => crate::catalog::load_dir(dir)?.with_strict(self.strict),
        };
        Ok(Arc::new(catalog))
    }
}
