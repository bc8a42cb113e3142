//! What an operator does with the binary: configuration sources, log
//! format, migrations, the side listeners.

mod config_sources;
mod json_logs;
mod listeners;
mod migrate;
