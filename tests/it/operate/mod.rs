//! What an operator does with the binary: configuration sources, log
//! format, migrations.

mod config_sources;
mod json_logs;
mod migrate;
