//! Pagination: opaque cursors over a stable order, and capped page sizes.

use base64::Engine as _;

use super::problem::Problem;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A list page, as every list answers.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Page<T: utoipa::ToSchema> {
    pub data: Vec<T>,
    /// Pass as `after` for the next page; null when there is none.
    pub next_cursor: Option<String>,
}

impl<T: utoipa::ToSchema> Page<T> {
    /// A page of rows ordered by `(created_at, id)`: a full page points past
    /// its last row, a short one is the end.
    pub fn of<R>(
        rows: Vec<R>,
        limit: u32,
        position: impl Fn(&R) -> (i64, &str),
        out: impl FnMut(R) -> T,
    ) -> Page<T> {
        let next_cursor = if rows.len() == limit as usize {
            rows.last().map(|r| {
                let (at, id) = position(r);
                encode_position(at, id)
            })
        } else {
            None
        };
        Page {
            data: rows.into_iter().map(out).collect(),
            next_cursor,
        }
    }
}

/// A cursor at `(created_at, id)` of the last item seen.
pub fn encode_position(at: i64, id: &str) -> String {
    B64.encode(format!("p1:{at}:{id}"))
}

pub fn decode_position(cursor: &str) -> Result<(i64, String), Problem> {
    let text = B64
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(Problem::invalid_cursor)?;
    let rest = text
        .strip_prefix("p1:")
        .ok_or_else(Problem::invalid_cursor)?;
    let (at, id) = rest.split_once(':').ok_or_else(Problem::invalid_cursor)?;
    let at = at.parse().map_err(|_| Problem::invalid_cursor())?;
    if id.is_empty() || id.len() > 128 {
        return Err(Problem::invalid_cursor());
    }
    Ok((at, id.to_string()))
}

/// A cursor at a feed position.
pub fn encode_seq(seq: i64) -> String {
    B64.encode(format!("f1:{seq}"))
}

pub fn decode_seq(cursor: &str) -> Result<i64, Problem> {
    let text = B64
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(Problem::invalid_cursor)?;
    text.strip_prefix("f1:")
        .and_then(|s| s.parse().ok())
        .filter(|s: &i64| *s >= 0)
        .ok_or_else(Problem::invalid_cursor)
}

/// The feed position an `after` cursor names; the start when absent.
pub fn feed_after(after: Option<&str>) -> Result<i64, Problem> {
    after
        .map(decode_seq)
        .transpose()
        .map(|seq| seq.unwrap_or(0))
}

/// The page size: the default when absent, 1..=max otherwise.
pub fn limit(asked: Option<i64>, default: u32, max: u32) -> Result<u32, Problem> {
    match asked {
        None => Ok(default),
        Some(n) if n >= 1 && n <= i64::from(max) => Ok(n as u32),
        Some(n) => Err(Problem::out_of_range(
            "limit",
            format!("limit must be between 1 and {max}, got {n}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_forgeries_are_refused() {
        let c = encode_position(1_700_000_000_000, "ep_01J");
        assert_eq!(
            decode_position(&c).expect("valid"),
            (1_700_000_000_000, "ep_01J".to_string())
        );
        assert_eq!(decode_seq(&encode_seq(42)).expect("valid"), 42);
        for bad in ["", "!!!", "cDE6eA", &encode_seq(3)] {
            assert!(
                decode_position(bad).is_err(),
                "{bad} is not a position cursor"
            );
        }
        assert!(
            decode_seq(&c).is_err(),
            "a position cursor is not a feed cursor"
        );
    }

    #[test]
    fn limits_are_capped() {
        assert_eq!(limit(None, 50, 500).expect("default"), 50);
        assert_eq!(limit(Some(500), 50, 500).expect("max"), 500);
        assert!(limit(Some(501), 50, 500).is_err());
        assert!(limit(Some(0), 50, 500).is_err());
    }
}
