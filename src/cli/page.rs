//! Paging for the `list` commands: the API's page size bounds and cursors,
//! and the query string a list's flags are read from as the API reads it.

use clap::Args;

use super::exit::from_problem;
use crate::{config::ApiConfig, http::page, store::scoped::Position};

#[derive(Debug, Args)]
pub struct PageArgs {
    /// How many to show, 1 to api.page_size_max (default: api.page_size_default).
    #[arg(long, value_name = "N")]
    pub limit: Option<i64>,
    /// Start after the previous page: the cursor it ended with (`next_cursor`).
    #[arg(long, value_name = "CURSOR")]
    pub after: Option<String>,
}

impl PageArgs {
    /// The page size and the position the page continues from.
    pub fn resolve(&self, api: &ApiConfig) -> anyhow::Result<(u32, Option<Position>)> {
        let limit = page::limit(self.limit, api.page_size_default, api.page_size_max)
            .map_err(from_problem)?;
        let after = self
            .after
            .as_deref()
            .map(page::decode_position)
            .transpose()
            .map_err(from_problem)?;
        Ok((limit, after))
    }
}

/// A query string of the pairs that are given, as the API would be sent
/// it: commands read their flags with the API's own query parsing.
pub fn query(pairs: &[(&str, Option<String>)]) -> String {
    let given: Vec<(&str, &str)> = pairs
        .iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (*k, v)))
        .collect();
    serde_urlencoded::to_string(given).unwrap_or_default()
}
