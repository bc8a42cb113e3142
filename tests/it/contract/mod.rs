//! The event contract (issue 10): ingest refuses what the catalog forbids,
//! naming each field; a delivery that no longer qualifies is never sent; the
//! documentation's own examples pass the catalog.

mod catalog_cli;
mod doc_examples;
mod ingest;
mod migration;
mod pinning;
mod rejected;
mod secrets;
mod send_time;

/// The strict catalog the harness turns off for delivery tests.
pub const STRICT: (&str, &str) = ("HOOKD_CATALOG__STRICT", "true");
