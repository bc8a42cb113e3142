//! The crossing rule, as one pure function: from the prior and the new
//! value, each threshold's level and armed state, and the rule, what fired
//! and what re-armed. No clock, no database.

use super::{
    amount::Amount,
    threshold::{Direction, Rule, Threshold},
};

/// One threshold as the evaluator sees it: resolved to the value it fires
/// at, and whether it may fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    pub threshold: Threshold,
    /// The resolved value (see [`Threshold::resolve`]).
    pub at: Amount,
    /// False once it has fired, until it re-arms.
    pub armed: bool,
}

/// One change of the watched value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub prior: Amount,
    pub new: Amount,
    /// The change opens a new period (a budget's month rolled over): every
    /// threshold is armed again before the change is evaluated.
    pub new_period: bool,
}

/// A threshold that fired: one event to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crossing {
    pub threshold: Threshold,
    /// The value it fired at.
    pub at: Amount,
    pub direction: Direction,
    pub prior: Amount,
    pub new: Amount,
}

/// What one change did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// In the order the value passed them: ascending `at` when rising,
    /// descending when falling (ties keep the order of the levels).
    pub fired: Vec<Crossing>,
    /// Thresholds that were disarmed and are armed after the change.
    pub rearmed: Vec<Threshold>,
    /// Each level's armed state after the change, in the order given.
    pub armed: Vec<bool>,
}

impl Change {
    pub fn new(prior: Amount, new: Amount) -> Change {
        Change {
            prior,
            new,
            new_period: false,
        }
    }

    /// The same change, as the first one of a new period.
    pub fn in_new_period(self) -> Change {
        Change {
            new_period: true,
            ..self
        }
    }
}

impl Crossing {
    /// The percentage, for a percentage threshold.
    pub fn percent(&self) -> Option<u32> {
        match self.threshold {
            Threshold::Percent(p) => Some(p),
            Threshold::Amount(_) => None,
        }
    }
}

/// Applies the crossing rule. Rising (falling is the mirror image):
/// - an armed threshold fires when `prior < T ≤ new`, and firing disarms it;
///   the same value twice fires nothing, and a jump past several thresholds
///   fires each of them;
/// - a disarmed threshold re-arms when the rule says so (`new < T − band`),
///   or when the change opens a new period.
pub fn evaluate(rule: Rule, levels: &[Level], change: Change) -> Outcome {
    let orient = |a: Amount| rule.direction.orient(a);
    let (prior, new) = (orient(change.prior), orient(change.new));
    let mut out = Outcome {
        armed: Vec::with_capacity(levels.len()),
        ..Outcome::default()
    };
    for level in levels {
        let at = orient(level.at);
        let armed = level.armed || change.new_period;
        let crosses = prior < at && at <= new;
        let armed_after = if armed {
            !crosses
        } else {
            rule.rearm.rearms(at, new)
        };
        if armed && crosses {
            out.fired.push(Crossing {
                threshold: level.threshold.clone(),
                at: level.at,
                direction: rule.direction,
                prior: change.prior,
                new: change.new,
            });
        }
        if !level.armed && armed_after {
            out.rearmed.push(level.threshold.clone());
        }
        out.armed.push(armed_after);
    }
    out.fired.sort_by_key(|c| orient(c.at));
    out
}
