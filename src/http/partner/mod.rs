//! The Partner API: a partner's endpoints, secrets, deliveries, replays,
//! recovery and event feed. Every handler starts from the caller's partner
//! id (`auth::partner`) and reaches data only through `store::scoped`.

pub mod auth_ops;
pub mod auth_shapes;
pub mod catalog;
pub mod checks;
pub mod deliveries;
pub mod endpoint_acts;
pub mod endpoint_ops;
pub mod endpoint_shapes;
pub mod endpoints;
pub mod event_export;
pub mod event_range;
pub mod events;
pub mod filters;
pub mod ordering;
mod pins;
pub mod receiver_auth;
pub mod settings;

use crate::domain::event::format_time;

/// Unix milliseconds as the API's RFC 3339 time.
pub fn time(ms: i64) -> String {
    format_time(ms)
}
