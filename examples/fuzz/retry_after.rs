//! `Retry-After`: delay-seconds or an HTTP date. Any text is parsed
//! without a panic; whole seconds are read exactly; dates are never negative.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use hookd::domain::outcome::parse_retry_after;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

pub fn run(runner: &mut TestRunner) -> Result<(), String> {
    let now = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
    let strategy = prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        "[0-9]{1,30}",
        "(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{1,2} (Jan|Feb|Dec|Foo) [0-9]{1,5} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT",
        "[ -~]{0,40}",
        ".{0,20}",
    ];
    crate::outcome(runner.run(&strategy, |text| {
        let parsed = parse_retry_after(&text, now);
        if let Ok(secs) = text.trim().parse::<u64>() {
            prop_assert_eq!(parsed, Some(Duration::from_secs(secs)));
        }
        Ok(())
    }))
}
