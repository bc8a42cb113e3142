//! hookd's integration tests: one binary, a shared harness, every test on
//! SQLite and on PostgreSQL.

mod harness;

mod cli;
mod crash;
mod delivery;
mod egress;
mod ingest;
mod isolation;
mod partner_api;
