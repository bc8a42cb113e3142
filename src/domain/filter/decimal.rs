//! Exact decimals of any size, compared on their digits: a sign, the
//! significant digits and a power of ten. No floats, so `"0.10"` equals
//! `0.1` and `0.3` is not `0.1 + 0.2` give or take a rounding.

use std::cmp::Ordering;

/// `±0.d₁d₂…dₙ × 10^exponent` with `d₁ ≠ 0` and `dₙ ≠ 0`; zero has no digits,
/// no sign and exponent 0. So equal values have equal fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
}

/// Exponents with more digits than this are not compared (a number like
/// `1e99999999999999999999` is not a value anyone filters on).
const MAX_EXPONENT_DIGITS: usize = 18;

impl Decimal {
    /// A plain decimal: an optional `-`, digits, then optionally `.` and
    /// digits (`"10.50"`, `"-3"`, `"007"`). No `+`, no exponent, no spaces.
    pub(super) fn parse_plain(s: &str) -> Option<Decimal> {
        let (negative, unsigned) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (whole, fraction) = match unsigned.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (unsigned, None),
        };
        let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || fraction.is_some_and(|f| !digits(f)) {
            return None;
        }
        Decimal::from_parts(negative, whole, fraction.unwrap_or(""), 0)
    }

    /// A JSON number's text, as serde_json keeps it (`1.5e3` included).
    /// `None` when its exponent is too long to compare.
    pub(super) fn parse_number(s: &str) -> Option<Decimal> {
        let Some(e) = s.find(['e', 'E']) else {
            return Decimal::parse_plain(s);
        };
        let (mantissa, exponent) = (&s[..e], &s[e + 1..]);
        let (minus, digits) = match exponent.as_bytes().first() {
            Some(b'-') => (true, &exponent[1..]),
            Some(b'+') => (false, &exponent[1..]),
            _ => (false, exponent),
        };
        if digits.is_empty()
            || digits.len() > MAX_EXPONENT_DIGITS
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let shift: i64 = digits.parse().ok()?;
        let m = Decimal::parse_plain(mantissa)?;
        if m.digits.is_empty() {
            return Some(m);
        }
        let exponent = m.exponent.checked_add(if minus { -shift } else { shift })?;
        Some(Decimal { exponent, ..m })
    }

    fn from_parts(negative: bool, whole: &str, fraction: &str, shift: i64) -> Option<Decimal> {
        let all: String = [whole, fraction].concat();
        let significant = all.trim_start_matches('0');
        let leading = all.len() - significant.len();
        let digits = significant.trim_end_matches('0');
        if digits.is_empty() {
            return Some(Decimal {
                negative: false,
                digits: String::new(),
                exponent: 0,
            });
        }
        let whole_len = i64::try_from(whole.len()).ok()?;
        let leading = i64::try_from(leading).ok()?;
        Some(Decimal {
            negative,
            digits: digits.to_string(),
            exponent: whole_len.checked_sub(leading)?.checked_add(shift)?,
        })
    }

    /// -1, 0 or 1.
    fn signum(&self) -> i8 {
        match (self.digits.is_empty(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        let sign = self.signum().cmp(&other.signum());
        if sign != Ordering::Equal || self.signum() == 0 {
            return sign;
        }
        // Same sign, both non-zero: the larger exponent is the larger
        // magnitude, then the digits decide, compared as text (a shorter
        // prefix is smaller: 0.5 < 0.51, as no digit string ends in 0).
        let magnitude = self
            .exponent
            .cmp(&other.exponent)
            .then_with(|| self.digits.cmp(&other.digits));
        if self.negative {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plain(s: &str) -> Decimal {
        Decimal::parse_plain(s).unwrap_or_else(|| panic!("`{s}` is a plain decimal"))
    }

    fn number(s: &str) -> Decimal {
        Decimal::parse_number(s).unwrap_or_else(|| panic!("`{s}` is a JSON number"))
    }

    #[test]
    fn trailing_and_leading_zeros_do_not_change_the_value() {
        assert_eq!(plain("0.10"), plain("0.1"));
        assert_eq!(plain("007.5"), plain("7.50"));
        assert_eq!(plain("-0"), plain("0.000"));
        assert_eq!(plain("100"), plain("100.0"));
        assert_ne!(plain("100"), plain("10"));
    }

    #[test]
    fn only_plain_decimals_are_plain() {
        for s in [
            "", "-", ".5", "5.", "+5", "1e3", "1.5E3", " 1", "1 ", "0x10", "1_000", "--1",
        ] {
            assert_eq!(Decimal::parse_plain(s), None, "`{s}` is not plain");
        }
    }

    #[test]
    fn json_numbers_with_exponents_are_exact() {
        assert_eq!(number("1.5e3"), plain("1500"));
        assert_eq!(number("15E-1"), plain("1.5"));
        assert_eq!(number("1e+2"), plain("100"));
        assert_eq!(number("0e999"), plain("0"));
        assert_eq!(number("-2.50e-3"), plain("-0.0025"));
        assert!(number("1e400") > plain("9".repeat(399).as_str()));
        assert_eq!(Decimal::parse_number("1e1234567890123456789"), None);
        assert_eq!(Decimal::parse_number("1e"), None);
    }

    #[test]
    fn order_follows_sign_then_magnitude() {
        let ascending = [
            "-1000", "-999.99", "-1", "-0.5", "-0.05", "0", "0.001", "0.01", "0.1", "0.5", "0.51",
            "0.6", "1", "9.999", "10", "10.5",
        ];
        for w in ascending.windows(2) {
            assert!(plain(w[0]) < plain(w[1]), "{} < {}", w[0], w[1]);
        }
    }

    #[test]
    fn numbers_beyond_u64_and_f64_precision_compare_exactly() {
        let big = "123456789012345678901234567890.000000000000000000001";
        let bigger = "123456789012345678901234567890.000000000000000000002";
        assert!(plain(big) < plain(bigger));
        assert_eq!(plain(big), number(big));
        assert!(plain("18446744073709551616") > plain("18446744073709551615"));
        assert!(number("9007199254740993") > number("9007199254740992"));
    }

    /// `value / 10^scale` written out, with extra leading and trailing zeros.
    fn write(value: i128, scale: u32, pad_left: usize, pad_right: usize) -> String {
        let digits = value.unsigned_abs().to_string();
        let scale = scale as usize;
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (whole, fraction) = padded.split_at(padded.len() - scale);
        let sign = if value < 0 { "-" } else { "" };
        let zeros_left = "0".repeat(pad_left);
        let zeros_right = "0".repeat(pad_right);
        if scale + pad_right == 0 {
            format!("{sign}{zeros_left}{whole}")
        } else {
            format!("{sign}{zeros_left}{whole}.{fraction}{zeros_right}")
        }
    }

    fn scaled(value: i128, scale: u32) -> i128 {
        value * 10i128.pow(12 - scale)
    }

    proptest! {
        #[test]
        fn comparison_agrees_with_scaled_integers(
            a in -10i128.pow(24)..10i128.pow(24), sa in 0u32..=12, la in 0usize..3, ra in 0usize..3,
            b in -10i128.pow(24)..10i128.pow(24), sb in 0u32..=12, lb in 0usize..3, rb in 0usize..3,
        ) {
            let (ta, tb) = (write(a, sa, la, ra), write(b, sb, lb, rb));
            prop_assert_eq!(plain(&ta).cmp(&plain(&tb)), scaled(a, sa).cmp(&scaled(b, sb)), "{} vs {}", ta, tb);
        }

        #[test]
        fn nearby_values_compare_like_their_integers(a in -2000i128..2000, b in -2000i128..2000, sa in 0u32..4, sb in 0u32..4) {
            let (ta, tb) = (write(a, sa, 0, 0), write(b, sb, 0, 0));
            prop_assert_eq!(plain(&ta).cmp(&plain(&tb)), scaled(a, sa).cmp(&scaled(b, sb)), "{} vs {}", ta, tb);
        }

        #[test]
        fn an_exponent_moves_the_point(value in -10i128.pow(20)..10i128.pow(20), scale in 0u32..=12, shift in 0u32..=12) {
            let text = write(value, scale, 0, 0);
            let shifted = write(value, scale, 0, 0) + &format!("e{shift}");
            prop_assert_eq!(number(&shifted).cmp(&plain(&text)), {
                let base = plain(&text);
                if shift == 0 || base.signum() == 0 { Ordering::Equal } else if base.negative { Ordering::Less } else { Ordering::Greater }
            });
            let exact = value * 10i128.pow(shift);
            prop_assert_eq!(number(&shifted), plain(&write(exact, scale, 0, 0)));
        }
    }
}
