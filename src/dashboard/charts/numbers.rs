//! How a chart's numbers read: counts and durations formatted short
//! enough for an axis, and the value axis's scale.

/// What the values measure, which decides how they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A count: `1234`, `12.5k`.
    Count,
    /// A duration in milliseconds: `350 ms`, `1.5 s`, `2 min`.
    Millis,
}

impl Unit {
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Count => count(v),
            Unit::Millis => millis(v),
        }
    }
}

/// `1234`, `12.5k`, `3.4M`: short enough for an axis.
fn count(v: f64) -> String {
    let short = |x: f64, suffix: &str| format!("{}{suffix}", trim(format!("{x:.1}")));
    match v.abs() {
        a if a >= 1e6 => short(v / 1e6, "M"),
        a if a >= 1e4 => short(v / 1e3, "k"),
        _ => format!("{}", v.round() as i64),
    }
}

/// `350 ms`, `1.5 s`, `2 min`, `1.2 h`.
fn millis(v: f64) -> String {
    let with = |x: f64, unit: &str| format!("{} {unit}", trim(format!("{x:.1}")));
    match v.abs() {
        a if a >= 3_600_000.0 => with(v / 3_600_000.0, "h"),
        a if a >= 60_000.0 => with(v / 60_000.0, "min"),
        a if a >= 1_000.0 => with(v / 1_000.0, "s"),
        _ => format!("{} ms", v.round() as i64),
    }
}

/// `2.0` → `2`; `2.5` stays.
fn trim(s: String) -> String {
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// The top of the value axis and its tick step: a step of 1, 2 or 5 times
/// a power of ten, about four ticks, the top at or above `max`. An axis
/// over nothing (max 0) runs 0 to 1.
pub fn scale(max: f64) -> (f64, f64) {
    if !(max.is_finite() && max > 0.0) {
        return (1.0, 1.0);
    }
    let raw = max / 4.0;
    let magnitude = 10_f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
        .max(1.0);
    ((max / step).ceil() * step, step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_rises_in_steps_of_one_two_or_five() {
        assert_eq!(scale(0.0), (1.0, 1.0), "nothing: 0 to 1");
        assert_eq!(scale(f64::NAN), (1.0, 1.0));
        assert_eq!(scale(3.0), (3.0, 1.0), "counts step by one at least");
        assert_eq!(scale(7.0), (8.0, 2.0));
        assert_eq!(scale(10.0), (10.0, 5.0));
        assert_eq!(scale(37.0), (40.0, 10.0));
        assert_eq!(scale(1234.0), (1500.0, 500.0));
    }

    #[test]
    fn values_read_with_their_units() {
        assert_eq!(Unit::Count.format(12.0), "12");
        assert_eq!(Unit::Count.format(12_500.0), "12.5k");
        assert_eq!(Unit::Count.format(3_400_000.0), "3.4M");
        assert_eq!(Unit::Millis.format(350.0), "350 ms");
        assert_eq!(Unit::Millis.format(1_500.0), "1.5 s");
        assert_eq!(Unit::Millis.format(120_000.0), "2 min");
        assert_eq!(Unit::Millis.format(4_320_000.0), "1.2 h");
    }
}
