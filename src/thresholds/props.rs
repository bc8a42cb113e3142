//! The crossing rule's invariants, over random thresholds, bands and
//! sequences of values, both directions.

use proptest::prelude::*;

use super::*;

fn amt(micros: i128) -> Amount {
    Amount::from_micros(micros).expect("small values are in range")
}

/// Values in a small range, so that sequences cross their thresholds often
/// and land exactly on a threshold or a band's edge often.
fn value() -> impl Strategy<Value = i128> {
    -30i128..30
}

fn direction() -> impl Strategy<Value = Direction> {
    prop_oneof![Just(Direction::Rising), Just(Direction::Falling)]
}

fn rearm() -> impl Strategy<Value = Rearm> {
    prop_oneof![
        3 => (0i128..10).prop_map(|b| Rearm::Band(Band::new(amt(b)).expect("non-negative"))),
        1 => Just(Rearm::NewPeriod),
    ]
}

fn rule() -> impl Strategy<Value = Rule> {
    (direction(), rearm()).prop_map(|(direction, rearm)| Rule { direction, rearm })
}

/// Up to 4 distinct threshold levels, each armed or not.
fn levels() -> impl Strategy<Value = Vec<Level>> {
    prop::collection::btree_set(value(), 1..5).prop_flat_map(|ats| {
        let n = ats.len();
        (Just(ats), prop::collection::vec(any::<bool>(), n)).prop_map(|(ats, armed)| {
            ats.into_iter()
                .zip(armed)
                .map(|(at, armed)| Level {
                    threshold: Threshold::Amount(amt(at)),
                    at: amt(at),
                    armed,
                })
                .collect()
        })
    })
}

/// A sequence of (value, opens a new period), new periods now and then.
fn steps() -> impl Strategy<Value = Vec<(i128, bool)>> {
    prop::collection::vec((value(), prop::bool::weighted(0.1)), 1..40)
}

fn band_of(rule: Rule) -> Option<i128> {
    match rule.rearm {
        Rearm::Band(b) => Some(b.width().micros()),
        Rearm::NewPeriod => None,
    }
}

/// Runs `steps` from `start` with every threshold armed; returns each
/// step's change and outcome.
fn run(
    rule: Rule,
    levels: &[Level],
    start: i128,
    steps: &[(i128, bool)],
) -> Vec<(Change, Outcome)> {
    let mut levels: Vec<Level> = levels
        .iter()
        .map(|l| Level {
            armed: true,
            ..l.clone()
        })
        .collect();
    let mut value = amt(start);
    let mut out = Vec::new();
    for &(v, new_period) in steps {
        let change = Change {
            prior: value,
            new: amt(v),
            new_period,
        };
        let outcome = evaluate(rule, &levels, change);
        for (l, a) in levels.iter_mut().zip(&outcome.armed) {
            l.armed = *a;
        }
        value = change.new;
        out.push((change, outcome));
    }
    out
}

fn negate(a: Amount) -> Amount {
    amt(-a.micros())
}

proptest! {
    #[test]
    fn a_fire_always_goes_from_before_the_threshold_to_at_or_past_it(
        rule in rule(), levels in levels(), prior in value(), new in value(), new_period: bool,
    ) {
        let out = evaluate(rule, &levels, Change { prior: amt(prior), new: amt(new), new_period });
        let o = |a: Amount| rule.direction.orient(a);
        for c in &out.fired {
            prop_assert!(o(c.prior) < o(c.at) && o(c.at) <= o(c.new), "{c:?} did not cross");
            let level = levels.iter().find(|l| l.threshold == c.threshold).expect("a fired level was given");
            prop_assert!(level.armed || new_period, "{c:?} fired while disarmed");
            prop_assert!(!out.armed[levels.iter().position(|l| l == level).expect("given")], "firing disarms");
        }
    }

    #[test]
    fn the_same_value_twice_fires_nothing(rule in rule(), levels in levels(), v in value(), new_period: bool) {
        let out = evaluate(rule, &levels, Change { prior: amt(v), new: amt(v), new_period });
        prop_assert!(out.fired.is_empty(), "{:?}", out.fired);
    }

    #[test]
    fn fires_come_in_the_order_the_value_passed_them(rule in rule(), levels in levels(), prior in value(), new in value()) {
        let out = evaluate(rule, &levels, Change::new(amt(prior), amt(new)));
        let passed: Vec<i128> = out.fired.iter().map(|c| rule.direction.orient(c.at)).collect();
        prop_assert!(passed.windows(2).all(|w| w[0] <= w[1]), "out of order: {:?}", out.fired);
    }

    #[test]
    fn a_jump_past_every_threshold_fires_every_armed_one(rule in rule(), levels in levels()) {
        let o = |l: &Level| rule.direction.orient(l.at);
        let (low, high) = (levels.iter().map(o).min().expect("one level"), levels.iter().map(o).max().expect("one level"));
        let from_to = |x: i128| match rule.direction { Direction::Rising => amt(x), Direction::Falling => amt(-x) };
        let out = evaluate(rule, &levels, Change::new(from_to(low - 1), from_to(high)));
        prop_assert_eq!(out.fired.len(), levels.iter().filter(|l| l.armed).count());
    }

    #[test]
    fn rearming_happens_exactly_when_the_value_moves_back_past_the_band(
        rule in rule(), levels in levels(), prior in value(), new in value(),
    ) {
        let out = evaluate(rule, &levels, Change::new(amt(prior), amt(new)));
        let n = rule.direction.orient(amt(new));
        for (level, armed_after) in levels.iter().zip(&out.armed) {
            let past_band = band_of(rule).is_some_and(|b| n < rule.direction.orient(level.at) - b);
            let reported = out.rearmed.contains(&level.threshold);
            if level.armed {
                prop_assert!(!reported, "an armed threshold cannot re-arm");
            } else {
                prop_assert_eq!(reported, past_band, "{:?} at {}", level, n);
                prop_assert_eq!(*armed_after, past_band);
            }
        }
    }

    #[test]
    fn each_threshold_fires_at_most_once_between_rearms(
        rule in rule(), levels in levels(), start in value(), steps in steps(),
    ) {
        // For each threshold: has it been re-armed since it last fired?
        let mut rearmed_since: Vec<Option<bool>> = vec![None; levels.len()];
        for (change, out) in run(rule, &levels, start, &steps) {
            for (i, level) in levels.iter().enumerate() {
                let fired = out.fired.iter().any(|c| c.threshold == level.threshold);
                if change.new_period || out.rearmed.contains(&level.threshold) {
                    rearmed_since[i] = Some(true);
                }
                if fired {
                    prop_assert_ne!(rearmed_since[i], Some(false), "{:?} fired twice without re-arming", level.threshold);
                    rearmed_since[i] = Some(false);
                }
            }
        }
    }

    #[test]
    fn fires_equal_the_crossings_that_start_armed(
        rule in rule(), levels in levels(), start in value(), steps in steps(),
    ) {
        // An independent model without an armed flag: a crossing counts if
        // the threshold never fired, or since it last did the value went
        // past the band or a period began.
        let o = |x: i128| rule.direction.orient(amt(x));
        let outcomes = run(rule, &levels, start, &steps);
        for level in &levels {
            let t = rule.direction.orient(level.at);
            let mut last_fire: Option<usize> = None;
            let mut expected = 0;
            let mut prior = o(start);
            for (j, &(v, _)) in steps.iter().enumerate() {
                let since = last_fire.map_or(0, |f| f + 1);
                let armed = last_fire.is_none()
                    || steps[since..=j].iter().any(|&(_, p)| p)
                    || band_of(rule).is_some_and(|b| steps[since..j].iter().any(|&(w, _)| o(w) < t - b));
                if armed && prior < t && t <= o(v) {
                    expected += 1;
                    last_fire = Some(j);
                }
                prior = o(v);
            }
            let fired = outcomes.iter().flat_map(|(_, out)| &out.fired).filter(|c| c.threshold == level.threshold).count();
            prop_assert_eq!(fired, expected, "{:?}", level.threshold);
        }
    }

    #[test]
    fn without_a_band_only_a_new_period_rearms(
        direction in direction(), levels in levels(), start in value(), steps in steps(),
    ) {
        let rule = Rule { direction, rearm: Rearm::NewPeriod };
        for (change, out) in run(rule, &levels, start, &steps) {
            prop_assert!(change.new_period || out.rearmed.is_empty());
        }
    }

    #[test]
    fn falling_is_rising_on_negated_values(
        rearm in rearm(), levels in levels(), prior in value(), new in value(), new_period: bool,
    ) {
        let falling = Rule { direction: Direction::Falling, rearm };
        let rising = Rule { direction: Direction::Rising, rearm };
        let mirrored: Vec<Level> = levels.iter().map(|l| Level { at: negate(l.at), ..l.clone() }).collect();
        let down = evaluate(falling, &levels, Change { prior: amt(prior), new: amt(new), new_period });
        let up = evaluate(rising, &mirrored, Change { prior: amt(-prior), new: amt(-new), new_period });
        prop_assert_eq!(&down.armed, &up.armed);
        prop_assert_eq!(&down.rearmed, &up.rearmed);
        let unmirrored: Vec<Crossing> = up.fired.into_iter().map(|c| Crossing {
            at: negate(c.at), prior: negate(c.prior), new: negate(c.new), direction: Direction::Falling, ..c
        }).collect();
        prop_assert_eq!(down.fired, unmirrored);
    }
}
