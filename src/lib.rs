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
//! The database is the truth; actors only schedule. The modules, in layers
//! from the bottom: each uses its own layer and those below, never one above,
//! and no file reaches itself through its imports (`tests/it/architecture.rs`
//! holds both; `docs/architecture.md` tells the whole story).
//!
//! 1. core: [`domain`] (pure: events, envelope, response policy, retries,
//!    circuit, clock, scorecards), [`catalog`] (event types, their versioned
//!    JSON Schemas, validation and projection), [`config`] (raw configuration
//!    validated into typed values), [`signing`], [`secret`] (Standard
//!    Webhooks signatures; secrets and their encryption at rest).
//! 2. edges: [`egress`] (which addresses may be contacted, URL checks, the
//!    resolver actor), [`notify`] (notice routes, mail), [`metrics`],
//!    [`file_limit`], [`instance_lock`], [`keyfile`], [`telemetry`] (spans
//!    and their export over OTLP/HTTP).
//! 3. [`store`]: every query; returns its own row types or domain types.
//! 4. producer helpers: [`outbox`], [`thresholds`] (threshold crossings
//!    recorded in the producer's transaction).
//! 5. [`cluster`]: endpoint leases across instances, the cluster actor.
//! 6. [`delivery`]: the fanout and endpoint actors, the committer, the
//!    recorder, the pinned HTTP client; their messages in `delivery::messages`.
//! 7. [`conformance`]: the receiver check, a scripted suite sent to a
//!    partner's endpoint.
//! 8. [`http`]: the web API (ingest, problem+json errors, auth, the origin check).
//! 9. pages: [`web`] (what the pages share), [`dashboard`] (the operator's
//!    pages, server-rendered, escaped, no script), [`portal`] (the partner's).
//! 10. commands: [`app`] (wiring: database, engine and server), [`cli`] (the
//!     command line), [`demo`] (everything end to end on this machine in one
//!     command), [`runtime`] (the actix system a command runs on, and its
//!     teardown).

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
pub mod runtime;
pub mod secret;
pub mod signing;
pub mod store;
pub mod telemetry;
pub mod thresholds;
pub mod web;
