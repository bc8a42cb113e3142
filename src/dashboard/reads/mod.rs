//! The dashboard's own reads: the summary cards of one partner or of all,
//! pages of attempts and deliveries from a cursor, attempt durations as
//! measured, and what an event's page shows beyond the API's read. They use the store's statement helpers, so each reads alike on
//! SQLite and PostgreSQL, and they only read.

pub mod attempts;
pub mod deliveries;
pub mod events;
pub mod totals;
