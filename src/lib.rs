//! hookd: a webhook delivery engine that runs beside a host service.
//!
//! ```text
//! host txn ──► outbox_event ──► FanoutActor ──► delivery rows
//!                                   │ supervises
//!                                   ▼
//!                     EndpointActor (one per endpoint with work):
//!                     concurrency cap, circuit breaker, retry timer
//!                                   │ signed POST through the egress client
//!                                   ▼
//!                     Recorder: attempts + state changes, group-committed
//! ```
//!
//! The database is the truth; actors only schedule. Modules:
//! - [`config`]: raw configuration validated into typed values.
//! - [`catalog`]: event types, their versioned JSON Schemas, validation and projection.
//! - [`domain`]: pure code: events, envelope, response policy, retries, circuit, clock.
//! - [`signing`], [`secret`]: Standard Webhooks signatures; secrets and their encryption at rest.
//! - [`egress`]: which addresses may be contacted, URL checks, the resolver actor.
//! - [`conformance`]: the receiver check, a scripted suite sent to a partner's endpoint.
//! - [`store`]: every query; returns domain types.
//! - [`delivery`]: the fanout and endpoint actors, the HTTP client, the recorder.
//! - [`http`]: the web API (ingest, problem+json errors, auth).
//! - [`dashboard`]: the operator's pages (server-rendered, escaped, no script).
//! - [`thresholds`]: threshold crossings (budgets, low balances) recorded in the producer's transaction.
//! - [`metrics`]: counters, histograms and gauges for `GET /metrics`.
//! - [`app`]: wiring: database, engine and server; [`cli`]: the command line;
//!   [`demo`]: everything end to end on this machine in one command.

pub mod app;
pub mod catalog;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod conformance;
pub mod dashboard;
pub mod delivery;
pub mod demo;
pub mod domain;
pub mod egress;
pub mod file_limit;
pub mod http;
pub mod instance_lock;
pub mod keyfile;
pub mod metrics;
pub mod notify;
pub mod outbox;
pub mod portal;
pub mod secret;
pub mod signing;
pub mod store;
pub mod thresholds;
pub mod web;
