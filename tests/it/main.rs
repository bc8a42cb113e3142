//! hookd's integration tests: one binary, a shared harness, every test on
//! SQLite and on PostgreSQL.

#![allow(
    clippy::disallowed_methods,
    reason = "tests drive hookd from outside: a plain HTTP client and wall-clock deadlines"
)]

mod harness;

mod admin_views;
mod alert_rules;
mod architecture;
mod budget;
mod cli;
mod cluster;
mod conformance;
mod connections;
mod contract;
mod crash;
mod dashboard;
mod delivery;
mod egress;
mod exact;
mod filters;
mod first_hour;
mod group_commit;
mod health;
mod health_metrics;
mod hostile;
mod incidents;
mod ingest;
mod isolation;
mod known_access;
mod lease_window;
mod notifications;
mod observe;
mod operate;
mod ordering;
mod partner_api;
mod paused;
mod portal;
mod rate_limits;
mod rate_limits_shared;
mod receiver_auth;
mod receivers;
mod records;
mod routing;
mod skips;
mod stop;
mod store;
mod suite;
mod thresholds;
mod writer;
