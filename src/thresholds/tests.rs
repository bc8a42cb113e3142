//! The crossing rule by example: a budget of 100.00 with thresholds at 80 %
//! and 100 %, and a low balance, stepped through changes one at a time.

use super::*;

fn amount(s: &str) -> Amount {
    Amount::parse(s).expect("a valid amount")
}

fn band(s: &str) -> Rearm {
    Rearm::Band(Band::new(amount(s)).expect("a non-negative band"))
}

/// A watched value with its thresholds' armed states, stepped like a host
/// would step it (the states a [`Tracker`] would store).
struct Watched {
    rule: Rule,
    levels: Vec<Level>,
    value: Amount,
}

impl Watched {
    fn new(direction: Direction, rearm: Rearm, thresholds: &[&str], budget: &str) -> Watched {
        let levels = thresholds
            .iter()
            .map(|t| {
                let threshold = Threshold::parse(t).expect("a valid threshold");
                let at = threshold
                    .resolve(Some(amount(budget)), direction)
                    .expect("resolvable");
                Level {
                    threshold,
                    at,
                    armed: true,
                }
            })
            .collect();
        Watched {
            rule: Rule { direction, rearm },
            levels,
            value: Amount::ZERO,
        }
    }

    fn budget(thresholds: &[&str], rearm: Rearm) -> Watched {
        Watched::new(Direction::Rising, rearm, thresholds, "100.00")
    }

    fn apply(&mut self, change: Change) -> (Vec<String>, Vec<String>) {
        let out = evaluate(self.rule, &self.levels, change);
        for (level, armed) in self.levels.iter_mut().zip(&out.armed) {
            level.armed = *armed;
        }
        self.value = change.new;
        let keys = |ts: Vec<Threshold>| ts.iter().map(Threshold::key).collect();
        (
            keys(out.fired.into_iter().map(|c| c.threshold).collect()),
            keys(out.rearmed),
        )
    }

    /// Moves the value to `to`; returns (fired, re-armed) threshold keys.
    fn to(&mut self, to: &str) -> (Vec<String>, Vec<String>) {
        self.apply(Change::new(self.value, amount(to)))
    }

    /// Starts a new period with the value at `to`.
    fn new_period_at(&mut self, to: &str) -> (Vec<String>, Vec<String>) {
        self.apply(Change::new(self.value, amount(to)).in_new_period())
    }

    fn fired(&mut self, to: &str) -> Vec<String> {
        self.to(to).0
    }
}

const NONE: [&str; 0] = [];

#[test]
fn a_budget_fires_80_and_100_percent_once_each_and_80_again_after_a_credit() {
    let mut b = Watched::budget(&["80%", "100%"], band("5"));
    assert_eq!(b.fired("79"), NONE, "79 is below 80 %");
    assert_eq!(b.fired("85"), ["80%"], "79 → 85 crosses 80 %");
    assert_eq!(b.fired("101"), ["100%"], "85 → 101 crosses 100 % only");
    assert_eq!(
        b.to("90"),
        (vec![], vec!["100%".into()]),
        "101 → 90 fires nothing; 90 < 100 − 5 re-arms 100 %"
    );
    assert_eq!(
        b.to("70"),
        (vec![], vec!["80%".into()]),
        "a credit to 70 re-arms 80 % (70 < 80 − 5)"
    );
    assert_eq!(b.fired("82"), ["80%"], "70 → 82 fires 80 % again");
}

#[test]
fn a_credit_that_stays_within_the_band_does_not_rearm() {
    let mut b = Watched::budget(&["80%"], band("5"));
    b.to("85");
    assert_eq!(b.to("76"), (vec![], vec![]), "76 is not below 75");
    assert_eq!(b.fired("90"), NONE, "still disarmed");
    assert_eq!(b.to("74.999999").1, ["80%"], "one micro-unit below 75");
}

#[test]
fn the_same_value_twice_fires_nothing() {
    let mut b = Watched::budget(&["80%"], band("5"));
    b.to("79");
    assert_eq!(b.fired("79"), NONE);
    assert_eq!(b.fired("85"), ["80%"]);
    assert_eq!(b.fired("85"), NONE);
}

#[test]
fn reaching_a_threshold_exactly_fires_it() {
    let mut b = Watched::budget(&["80%"], band("0"));
    b.to("79.999999");
    assert_eq!(b.fired("80"), ["80%"], "prior < T ≤ new includes new = T");
}

#[test]
fn a_value_that_starts_at_the_threshold_does_not_cross_it() {
    let mut b = Watched::budget(&["80%"], band("0"));
    b.value = amount("80");
    assert_eq!(b.fired("95"), NONE, "prior = T is not below T");
}

#[test]
fn a_jump_past_both_thresholds_fires_both_in_ascending_order() {
    let mut b = Watched::budget(&["100%", "80%"], band("5"));
    assert_eq!(
        b.fired("120"),
        ["80%", "100%"],
        "one crossing per threshold"
    );
}

#[test]
fn a_new_period_rearms_every_threshold() {
    let mut b = Watched::budget(&["80%", "100%"], Rearm::NewPeriod);
    b.to("120");
    assert_eq!(
        b.to("0"),
        (vec![], vec![]),
        "no band: a reversal keeps them disarmed"
    );
    assert_eq!(b.fired("120"), NONE);
    assert_eq!(
        b.new_period_at("0"),
        (vec![], vec!["80%".into(), "100%".into()]),
        "the new period re-arms both"
    );
    assert_eq!(b.fired("85"), ["80%"]);
}

#[test]
fn the_change_that_opens_a_period_can_cross_at_once() {
    let mut b = Watched::budget(&["80%"], Rearm::NewPeriod);
    b.to("90");
    b.to("10");
    assert_eq!(
        b.new_period_at("85"),
        (vec!["80%".into()], vec![]),
        "re-armed by the new period, then crossed (and disarmed) by the change"
    );
}

#[test]
fn amounts_and_percentages_mix_in_one_set() {
    let mut b = Watched::budget(&["50.00", "80%"], band("0"));
    assert_eq!(b.fired("81"), ["50.000000", "80%"]);
}

#[test]
fn a_low_balance_fires_when_it_falls_to_the_threshold_and_rearms_above_it() {
    let mut bal = Watched::new(Direction::Falling, band("0"), &["10.00"], "0");
    bal.value = amount("12");
    assert_eq!(bal.fired("10"), ["10.000000"], "12 → 10 reaches 10");
    assert_eq!(bal.fired("9"), NONE, "already fired");
    assert_eq!(bal.to("10").1, NONE, "at 10 the balance is not above it");
    assert_eq!(bal.to("10.000001").1, ["10.000000"], "just above re-arms");
    assert_eq!(bal.fired("9.5"), ["10.000000"], "and it fires again");
}

#[test]
fn a_low_balance_band_needs_a_top_up_past_it() {
    let mut bal = Watched::new(Direction::Falling, band("2"), &["10.00"], "0");
    bal.value = amount("50");
    bal.to("9");
    assert_eq!(bal.to("12").1, NONE, "12 is not above 10 + 2");
    assert_eq!(bal.to("12.01").1, ["10.000000"]);
}

#[test]
fn a_balance_that_drops_past_two_thresholds_fires_the_higher_first() {
    let mut bal = Watched::new(Direction::Falling, band("0"), &["5", "10"], "0");
    bal.value = amount("12");
    assert_eq!(bal.fired("-1"), ["10.000000", "5.000000"]);
}

#[test]
fn a_low_balance_percentage_rounds_down() {
    // 10 % of 0.000015 is 0.0000015: falling, it fires at 0.000001.
    let bal = Watched::new(Direction::Falling, band("0"), &["10%"], "0.000015");
    assert_eq!(bal.levels[0].at, amount("0.000001"));
}

#[test]
fn a_tracker_refuses_a_threshold_given_twice() {
    let rule = Rule {
        direction: Direction::Rising,
        rearm: Rearm::NewPeriod,
    };
    let twice = [
        Threshold::parse("10").expect("valid"),
        Threshold::parse("10.00").expect("valid"),
    ];
    assert!(matches!(
        Tracker::new(rule, twice),
        Err(ThresholdError::Duplicate(_))
    ));
}
