//! The shape of one catalog file, as read. Unknown keys are refused, so a
//! misspelt `compatible_with` is an error at load, not a silent no-op.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TypeFile {
    #[serde(rename = "type")]
    pub event_type: String,
    pub description: String,
    pub sensitivity: String,
    pub versions: Vec<VersionFile>,
    #[serde(default)]
    pub deprecated: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VersionFile {
    pub version: u32,
    pub schema: Value,
    pub example: Value,
    #[serde(default)]
    pub compatible_with: Vec<u32>,
}
