//! Pure domain code: identifiers, events and their envelope, the response
//! policy, the retry schedule, the circuit breaker and the clock. No I/O here.

pub mod circuit;
pub mod clock;
pub mod event;
pub mod ids;
pub mod outcome;
pub mod partner;
pub mod retry;
pub mod strict_json;
pub mod token_bucket;
