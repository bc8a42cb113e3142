//! Why an endpoint actor gave deliveries back to the database unattempted.
//! Each reason is a label of `hookd_deliveries_handed_back_total`: a steady
//! rate of `beyond-claim` or `behind-older` means fresh events arrive faster
//! than an endpoint's receiver takes them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandBack {
    /// Handed over beyond what one claim would hold (events faster than
    /// the receiver).
    BeyondClaim,
    /// Handed over while older deliveries wait as rows: these go behind them.
    BehindOlder,
    /// Their leases no longer leave time for an attempt.
    LeaseWindow,
    /// The circuit opened: they wait for it, not leased in memory.
    CircuitOpen,
    /// The endpoint is stopping (paused, disabled, deleted, or hookd stopping).
    Stopping,
    /// Past their window before an attempt: the next claim finds them dead.
    Expired,
    /// This instance lost the endpoint's lease before the attempt went out.
    LeaseLost,
}

impl HandBack {
    pub const ALL: [HandBack; 7] = [
        HandBack::BeyondClaim,
        HandBack::BehindOlder,
        HandBack::LeaseWindow,
        HandBack::CircuitOpen,
        HandBack::Stopping,
        HandBack::Expired,
        HandBack::LeaseLost,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HandBack::BeyondClaim => "beyond-claim",
            HandBack::BehindOlder => "behind-older",
            HandBack::LeaseWindow => "lease-window",
            HandBack::CircuitOpen => "circuit-open",
            HandBack::Stopping => "stopping",
            HandBack::Expired => "expired",
            HandBack::LeaseLost => "lease-lost",
        }
    }
}
