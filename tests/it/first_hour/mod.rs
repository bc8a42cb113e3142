//! Issue 13, the first hour: the operator's CLI, start-up, configuration
//! errors, one error grammar, the OpenAPI document, readable logs, and a
//! replay that goes now; the keys of a dev run die with it.

mod bench_table;
mod cli_ops;
mod config;
mod dev_keys;
mod dev_mode;
mod doc_links;
mod egress_docs;
mod errors;
mod home;
mod logs;
mod openapi;
mod replay_now;
mod startup;
