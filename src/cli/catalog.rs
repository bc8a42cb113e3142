//! `hookd catalog check`: load a catalog as `serve` would and list its types.

use std::path::PathBuf;

use clap::Subcommand;

use crate::config::Config;

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Load a catalog directory (default: `catalog.path`, else the bundled
    /// one) as `serve` would, and list its types; exit 1 naming the file and
    /// the JSON pointer of the first problem.
    Check {
        /// A directory of `<type>.json` files.
        dir: Option<PathBuf>,
        /// Print the types as JSON, as GET /v1/event-types answers.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(config: &Config, command: CatalogCommand) -> anyhow::Result<()> {
    let CatalogCommand::Check { dir, json } = command;
    let mut catalog = config.catalog.clone();
    if dir.is_some() {
        catalog.path = dir;
    }
    let shown = catalog
        .path
        .as_ref()
        .map_or("the bundled catalog".to_string(), |p| {
            p.display().to_string()
        });
    let loaded = catalog.load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let answer = serde_json::json!({ "data": loaded.published() });
    super::out::emit(json, &answer, || {
        let mut text = String::new();
        for t in loaded.types() {
            let versions: Vec<String> = t.versions.iter().map(|v| v.version.to_string()).collect();
            text += &format!(
                "{}  versions {}{}\n",
                t.name,
                versions.join(", "),
                if t.deprecated { "  (deprecated)" } else { "" }
            );
        }
        text + &format!(
            "{shown}: {} event types, every schema compiles and every example is valid",
            loaded.types().count()
        )
    })
}
