//! A retry schedule in a test's configuration, without jitter, so that a
//! test knows to the millisecond when each attempt falls due.

/// The configuration for the schedule `steps` (a JSON list of durations,
/// `r#"["0s", "1h"]"#`: the first attempt, then each retry's delay) with no jitter.
pub fn exact_schedule(steps: &'static str) -> [(&'static str, &'static str); 2] {
    [
        ("HOOKD_DELIVERY__SCHEDULE", steps),
        ("HOOKD_DELIVERY__JITTER", "0"),
    ]
}
