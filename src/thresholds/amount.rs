//! Money as an exact decimal: a count of micro-units (10⁻⁶) in an `i128`,
//! parsed from and formatted as the catalog's decimal strings. No floats.

use std::{fmt, str::FromStr};

/// Micro-units in one unit: the catalog allows 6 fractional digits.
const SCALE: i128 = 1_000_000;
/// The catalog allows up to 18 integer digits, so |amount| < 10¹⁸ units.
const LIMIT: i128 = 1_000_000_000_000_000_000 * SCALE;

/// An exact amount of money, `-999999999999999999.999999` to
/// `999999999999999999.999999`: the range of the catalog's decimal strings,
/// so every `Amount` formats as a string the catalog accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(i128);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error(
        "`{0}` is not a decimal amount (an optional '-', digits without leading zeros, then optionally '.' and 1 to 6 digits)"
    )]
    Syntax(String),
    #[error("`{0}` has more than 6 fractional digits (the catalog's precision is the micro-unit)")]
    TooPrecise(String),
    #[error("{0} is out of range: an amount has at most 18 integer digits")]
    OutOfRange(String),
}

impl Amount {
    pub const ZERO: Amount = Amount(0);

    /// The amount of `micros` micro-units (`12_500_000` is 12.5).
    pub fn from_micros(micros: i128) -> Result<Amount, AmountError> {
        if micros.abs() < LIMIT {
            Ok(Amount(micros))
        } else {
            Err(AmountError::OutOfRange(format!("{micros} micro-units")))
        }
    }

    pub fn micros(self) -> i128 {
        self.0
    }

    pub fn parse(s: &str) -> Result<Amount, AmountError> {
        let syntax = || AmountError::Syntax(s.to_string());
        let (negative, unsigned) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (whole, fraction) = match unsigned.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (unsigned, None),
        };
        let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || (whole.len() > 1 && whole.starts_with('0')) {
            return Err(syntax());
        }
        if whole.len() > 18 {
            return Err(AmountError::OutOfRange(s.to_string()));
        }
        let fraction = match fraction {
            None => "",
            Some(f) if !digits(f) => return Err(syntax()),
            Some(f) if f.len() > 6 => return Err(AmountError::TooPrecise(s.to_string())),
            Some(f) => f,
        };
        // At most 18 + 6 digits: both parts fit an i128 with room to spare.
        let whole: i128 = whole.parse().map_err(|_| syntax())?;
        let padded = format!("{fraction:0<6}");
        let fraction: i128 = padded.parse().map_err(|_| syntax())?;
        let micros = whole * SCALE + fraction;
        Ok(Amount(if negative { -micros } else { micros }))
    }
}

impl FromStr for Amount {
    type Err = AmountError;
    fn from_str(s: &str) -> Result<Amount, AmountError> {
        Amount::parse(s)
    }
}

impl TryFrom<&str> for Amount {
    type Error = AmountError;
    fn try_from(s: &str) -> Result<Amount, AmountError> {
        Amount::parse(s)
    }
}

/// Always 6 fractional digits (`12.500000`), as in the catalog's examples;
/// zero is `0.000000`, never `-0.000000`.
impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let scale = SCALE.unsigned_abs();
        write!(f, "{sign}{}.{:06}", abs / scale, abs % scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn micros(s: &str) -> i128 {
        Amount::parse(s).expect("a valid amount").micros()
    }

    #[test]
    fn decimal_strings_parse_to_exact_micro_units() {
        assert_eq!(micros("12.5"), 12_500_000);
        assert_eq!(micros("12.500000"), 12_500_000);
        assert_eq!(micros("0.000001"), 1);
        assert_eq!(micros("-0.5"), -500_000);
        assert_eq!(micros("-0"), 0);
        assert_eq!(micros("100"), 100_000_000);
        assert_eq!(
            micros("999999999999999999.999999"),
            LIMIT - 1,
            "the largest catalog amount"
        );
    }

    #[test]
    fn strings_the_catalog_refuses_do_not_parse() {
        for bad in [
            "", "-", ".5", "5.", "1.2.3", "+1", "01", "1e3", " 1", "1,5", "--1", "0x10", "1.-5",
        ] {
            assert!(
                matches!(Amount::parse(bad), Err(AmountError::Syntax(_))),
                "`{bad}` should be a syntax error"
            );
        }
        assert!(matches!(
            Amount::parse("1.0000001"),
            Err(AmountError::TooPrecise(_))
        ));
        assert!(matches!(
            Amount::parse("1000000000000000000"),
            Err(AmountError::OutOfRange(_))
        ));
        assert!(Amount::from_micros(LIMIT).is_err());
        assert!(Amount::from_micros(-LIMIT).is_err());
    }

    #[test]
    fn amounts_format_with_six_fractional_digits() {
        let shown = |s: &str| Amount::parse(s).expect("valid").to_string();
        assert_eq!(shown("12.5"), "12.500000");
        assert_eq!(shown("0"), "0.000000");
        assert_eq!(shown("-0.000000"), "0.000000", "no negative zero");
        assert_eq!(shown("-7.25"), "-7.250000");
    }

    proptest! {
        #[test]
        fn formatting_then_parsing_gives_the_same_amount(m in -(LIMIT - 1)..LIMIT) {
            let a = Amount::from_micros(m).expect("in range");
            prop_assert_eq!(Amount::parse(&a.to_string()), Ok(a));
        }

        #[test]
        fn parsing_keeps_the_order_of_the_numbers(a in -(LIMIT - 1)..LIMIT, b in -(LIMIT - 1)..LIMIT) {
            let (x, y) = (Amount::from_micros(a).expect("in range"), Amount::from_micros(b).expect("in range"));
            let (px, py) = (Amount::parse(&x.to_string()).expect("valid"), Amount::parse(&y.to_string()).expect("valid"));
            prop_assert_eq!(px.cmp(&py), a.cmp(&b));
        }
    }
}
