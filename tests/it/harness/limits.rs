//! Rate limits in a test's configuration: none at all, or one set low on
//! purpose for one kind of caller.

/// Rate limits no test meets: for tests that send many requests with one key.
pub const UNLIMITED: [(&str, &str); 6] = [
    ("HOOKD_API__RATE_LIMIT_PER_SECOND", "100000"),
    ("HOOKD_API__RATE_LIMIT_BURST", "100000"),
    ("HOOKD_API__SERVICE_RATE_LIMIT_PER_SECOND", "100000"),
    ("HOOKD_API__SERVICE_RATE_LIMIT_BURST", "100000"),
    ("HOOKD_API__ANONYMOUS_RATE_LIMIT_PER_SECOND", "100000"),
    ("HOOKD_API__ANONYMOUS_RATE_LIMIT_BURST", "100000"),
];

/// Who a rate limit applies to, as the configuration names it.
#[derive(Debug, Clone, Copy)]
pub enum Limited {
    /// Partner and operator keys (`api.rate_limit_*`).
    Keys,
    /// Service keys, at ingest (`api.service_rate_limit_*`).
    Service,
    /// Requests without a valid key, by address (`api.anonymous_rate_limit_*`).
    Anonymous,
}

/// The configuration for a rate limit of `per_second` with a burst of `burst` on `who`.
pub fn rate_limit(
    who: Limited,
    per_second: &'static str,
    burst: &'static str,
) -> [(&'static str, &'static str); 2] {
    match who {
        Limited::Keys => [
            ("HOOKD_API__RATE_LIMIT_PER_SECOND", per_second),
            ("HOOKD_API__RATE_LIMIT_BURST", burst),
        ],
        Limited::Service => [
            ("HOOKD_API__SERVICE_RATE_LIMIT_PER_SECOND", per_second),
            ("HOOKD_API__SERVICE_RATE_LIMIT_BURST", burst),
        ],
        Limited::Anonymous => [
            ("HOOKD_API__ANONYMOUS_RATE_LIMIT_PER_SECOND", per_second),
            ("HOOKD_API__ANONYMOUS_RATE_LIMIT_BURST", burst),
        ],
    }
}
