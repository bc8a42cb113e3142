//! hookd's integration tests: one binary, a shared harness, every test on
//! SQLite and on PostgreSQL.

mod harness;

mod cli;
mod delivery;
mod ingest;
