//! The receiver conformance check: a scripted suite sent to a partner's real
//! endpoint, through the same egress policy, resolver and pinned client as
//! deliveries, signed as deliveries are, and judged case by case into a
//! scorecard.
//!
//! - [`suite`]: the cases, in order, and the exact request of each (pure);
//! - [`judge`]: what each case expects and the verdict and hint for what it
//!   got (pure);
//! - [`send`]: the effects: resolve, pin, send each request in turn;
//! - [`host_slots`]: at most one check a minute per target host.
//!
//! Every request is marked: its event type is `webhook.check` (the unknown
//! type case's `webhook.check.unknown_type` aside) and it carries the header
//! `webhook-check: conformance`, so a receiver can route it to no business
//! handler. The API (`POST /v1/endpoints/{id}/check`) stores each scorecard;
//! `hookd check-receiver` prints it.

pub mod host_slots;
pub mod judge;
pub mod send;
pub mod suite;

pub use crate::domain::scorecard::{CaseResult, Scorecard};

use self::{judge::Verdict, suite::Case};

/// A check of one endpoint starts at most this often (across instances).
pub const CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

/// One case's result: its line of the scorecard.
pub fn case_result(case: Case, verdict: Verdict) -> CaseResult {
    CaseResult {
        name: case.name().into(),
        passed: verdict.passed,
        expected: judge::expected(case),
        got: verdict.got,
        hint: verdict.hint,
    }
}
