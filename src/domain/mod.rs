//! Pure domain code: identifiers, events and their envelope, payload
//! filters, the response policy, the retry schedule, the circuit breaker,
//! endpoint health over time, the receiver check's scorecard, the clock and
//! the expiring map in-process caches hold.
//! No I/O here.

pub mod circuit;
pub mod client_cert;
pub mod clock;
pub mod event;
pub mod expiring;
pub mod filter;
pub mod hand_back;
pub mod health;
pub mod ids;
pub mod incident;
pub mod ordering;
pub mod outcome;
pub mod partner;
pub mod receiver_auth;
pub mod redact_url;
pub mod renditions;
pub mod retry;
pub mod role;
pub mod scorecard;
pub mod secret_names;
pub mod secret_screen;
pub mod strict_json;
pub mod subscription;
pub mod token_bucket;
pub mod trace;
