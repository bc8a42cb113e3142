//! What a threshold is (an amount, or a percentage of a budget), which way
//! it is crossed, and when it re-arms: the rule the evaluator applies.

use std::{fmt, str::FromStr};

use super::amount::{Amount, AmountError};

/// A threshold as configured: an absolute amount (`"10.00"`) or a
/// percentage of the budget (`"80%"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Threshold {
    Amount(Amount),
    /// A whole percentage, 1 or more (above 100 is an overspend alert).
    Percent(u32),
}

/// Which way a value crosses its thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Spending and usage: fires when the value goes from below T to at or
    /// above it (`prior < T ≤ new`).
    Rising,
    /// A low balance: fires when the value goes from above T to at or below
    /// it (`prior > T ≥ new`).
    Falling,
}

/// The hysteresis band: how far the value must move back past a fired
/// threshold before it re-arms. Never negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Band(Amount);

/// When a fired (disarmed) threshold is armed again. A new budget period
/// re-arms every threshold under either rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rearm {
    /// When the value moves back past the threshold by more than the band:
    /// `new < T − band` rising, `new > T + band` falling. A credit or refund
    /// that does so re-arms, and the next crossing fires again.
    Band(Band),
    /// Only when a new period begins: reversals never re-arm.
    NewPeriod,
}

/// How a set of thresholds behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rule {
    pub direction: Direction,
    pub rearm: Rearm,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    #[error(transparent)]
    Amount(#[from] AmountError),
    #[error("`{0}` is not a percentage threshold (a whole number from 1, then '%')")]
    Percent(String),
    #[error("the threshold {0} is a percentage, and no budget was given")]
    NoBudget(Threshold),
    #[error("{0} of the budget {1} is out of range")]
    OutOfRange(Threshold, Amount),
    #[error("the band {0} is negative")]
    NegativeBand(Amount),
    #[error("the threshold {0} is given twice")]
    Duplicate(Threshold),
}

impl Threshold {
    /// `"80%"` is a percentage; anything else is an amount (`"10.00"`).
    pub fn parse(s: &str) -> Result<Threshold, ThresholdError> {
        match s.strip_suffix('%') {
            Some(pct) => match pct.parse::<u32>() {
                Ok(p) if p >= 1 && pct.bytes().all(|b| b.is_ascii_digit()) => {
                    Ok(Threshold::Percent(p))
                }
                _ => Err(ThresholdError::Percent(s.to_string())),
            },
            None => Ok(Threshold::Amount(Amount::parse(s)?)),
        }
    }

    /// The name its state is stored under: `80%`, or the amount with six
    /// fractional digits (so `10` and `10.00` are one threshold).
    pub fn key(&self) -> String {
        self.to_string()
    }

    /// The value at which it fires. A percentage is `budget × pct / 100`,
    /// exactly, then rounded to the micro-unit *away from firing early*: up
    /// for [`Direction::Rising`] (80 % of 0.000010 is 0.000008, but 80 % of
    /// 0.000011 is 0.0000088, which becomes 0.000009: "at or above 80 %"
    /// never fires below 80 %), down for [`Direction::Falling`].
    pub fn resolve(
        &self,
        budget: Option<Amount>,
        direction: Direction,
    ) -> Result<Amount, ThresholdError> {
        let pct = match self {
            Threshold::Amount(a) => return Ok(*a),
            Threshold::Percent(p) => i128::from(*p),
        };
        let budget = budget.ok_or_else(|| ThresholdError::NoBudget(self.clone()))?;
        // |budget| < 10²⁴ micro-units and pct < 2³², so this cannot overflow.
        let scaled = budget.micros() * pct;
        let micros = match direction {
            Direction::Rising => -(-scaled).div_euclid(100),
            Direction::Falling => scaled.div_euclid(100),
        };
        Amount::from_micros(micros).map_err(|_| ThresholdError::OutOfRange(self.clone(), budget))
    }
}

impl FromStr for Threshold {
    type Err = ThresholdError;
    fn from_str(s: &str) -> Result<Threshold, ThresholdError> {
        Threshold::parse(s)
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Threshold::Amount(a) => write!(f, "{a}"),
            Threshold::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl Band {
    pub const ZERO: Band = Band(Amount::ZERO);

    pub fn new(width: Amount) -> Result<Band, ThresholdError> {
        if width < Amount::ZERO {
            Err(ThresholdError::NegativeBand(width))
        } else {
            Ok(Band(width))
        }
    }

    pub fn width(self) -> Amount {
        self.0
    }
}

impl Direction {
    /// The value as seen from a rising threshold: a falling threshold is a
    /// rising one on negated values, so one set of rules serves both.
    pub(super) fn orient(self, a: Amount) -> i128 {
        match self {
            Direction::Rising => a.micros(),
            Direction::Falling => -a.micros(),
        }
    }
}

impl Rearm {
    /// Whether a disarmed threshold at `at` re-arms at `new` (both oriented).
    pub(super) fn rearms(self, at: i128, new: i128) -> bool {
        match self {
            Rearm::Band(band) => new < at - band.width().micros(),
            Rearm::NewPeriod => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn amount(s: &str) -> Amount {
        Amount::parse(s).expect("a valid amount")
    }

    #[test]
    fn thresholds_parse_as_percentages_or_amounts() {
        assert_eq!(Threshold::parse("80%"), Ok(Threshold::Percent(80)));
        assert_eq!(Threshold::parse("150%"), Ok(Threshold::Percent(150)));
        assert_eq!(
            Threshold::parse("10.5"),
            Ok(Threshold::Amount(amount("10.5")))
        );
        for bad in ["0%", "%", "-5%", "+5%", "8.5%", "80 %", "x"] {
            assert!(Threshold::parse(bad).is_err(), "`{bad}` should not parse");
        }
    }

    #[test]
    fn a_threshold_is_stored_under_one_key_however_it_was_written() {
        assert_eq!(
            Threshold::parse("10").expect("valid").key(),
            Threshold::parse("10.000").expect("valid").key()
        );
        assert_eq!(Threshold::Percent(80).key(), "80%");
        assert_eq!(Threshold::parse("10").expect("valid").key(), "10.000000");
    }

    #[test]
    fn eighty_percent_of_a_hundred_is_exactly_eighty() {
        let at = Threshold::Percent(80).resolve(Some(amount("100.00")), Direction::Rising);
        assert_eq!(at, Ok(amount("80")));
    }

    #[test]
    fn a_percentage_between_micro_units_rounds_away_from_firing_early() {
        // 80 % of 0.000011 is 0.0000088.
        let budget = Some(amount("0.000011"));
        let rising = Threshold::Percent(80).resolve(budget, Direction::Rising);
        let falling = Threshold::Percent(80).resolve(budget, Direction::Falling);
        assert_eq!(rising, Ok(amount("0.000009")), "rising rounds up");
        assert_eq!(falling, Ok(amount("0.000008")), "falling rounds down");
    }

    #[test]
    fn a_percentage_without_a_budget_is_an_error() {
        assert_eq!(
            Threshold::Percent(80).resolve(None, Direction::Rising),
            Err(ThresholdError::NoBudget(Threshold::Percent(80)))
        );
    }

    #[test]
    fn a_band_is_never_negative() {
        assert!(Band::new(amount("-0.000001")).is_err());
        assert_eq!(Band::new(Amount::ZERO), Ok(Band::ZERO));
    }

    proptest! {
        #[test]
        fn a_rising_percentage_is_the_smallest_micro_unit_at_or_above_the_exact_value(
            budget in -10i128.pow(22)..10i128.pow(22), pct in 1u32..1000,
        ) {
            let b = Amount::from_micros(budget).expect("in range");
            let at = Threshold::Percent(pct).resolve(Some(b), Direction::Rising).expect("in range").micros();
            let exact = budget * i128::from(pct); // 100 × the exact threshold
            prop_assert!(at * 100 >= exact, "{at} is below {pct} % of {b}");
            prop_assert!((at - 1) * 100 < exact, "{at} is not the smallest such micro-unit");
        }

        #[test]
        fn a_falling_percentage_is_the_largest_micro_unit_at_or_below_the_exact_value(
            budget in -10i128.pow(22)..10i128.pow(22), pct in 1u32..1000,
        ) {
            let b = Amount::from_micros(budget).expect("in range");
            let at = Threshold::Percent(pct).resolve(Some(b), Direction::Falling).expect("in range").micros();
            let exact = budget * i128::from(pct);
            prop_assert!(at * 100 <= exact && (at + 1) * 100 > exact);
        }

        #[test]
        fn a_threshold_key_parses_back_to_the_threshold(m in -10i128.pow(20)..10i128.pow(20), pct in 1u32..) {
            for t in [Threshold::Amount(Amount::from_micros(m).expect("in range")), Threshold::Percent(pct)] {
                prop_assert_eq!(Threshold::parse(&t.key()), Ok(t));
            }
        }
    }
}
