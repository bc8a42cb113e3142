//! How the dashboard's tables page: lists that grow at one end (attempts,
//! deliveries) in keyset pages over `(time, id)`, which stay put while new
//! rows arrive; the sorted endpoint list in numbered pages. Sizes are
//! fixed by each page; links lead both ways.

use crate::{
    http::{page, problem::Problem},
    store::{scoped::Position, search::Search},
};

/// Where a keyset page starts, as its link says: at the top, or just
/// before or just after a row (earlier or later in time).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Cursor {
    #[default]
    Top,
    Before(Position),
    After(Position),
}

impl Cursor {
    /// Reads the `before` and `after` fields of a query (empty: absent).
    pub fn read(before: &str, after: &str) -> Result<Cursor, Problem> {
        let cursor = |field: &str, text: &str| {
            page::decode_position(text.trim()).map_err(|_| {
                Problem::invalid(
                    field,
                    "this page link's position cannot be read; start again from the first page",
                )
            })
        };
        match (before.trim().is_empty(), after.trim().is_empty()) {
            (true, true) => Ok(Cursor::Top),
            (false, true) => Ok(Cursor::Before(cursor("before", before)?)),
            (true, false) => Ok(Cursor::After(cursor("after", after)?)),
            (false, false) => Err(Problem::invalid(
                "after",
                "a page starts before a row or after one, not both",
            )),
        }
    }
}

/// The order a list is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    NewestFirst,
    OldestFirst,
}

/// `search` ordered by `(at, id)` from `cursor`, for [`keyset_page`]: one row
/// more than `size`, to tell whether the list goes on.
pub(crate) fn keyset(
    search: Search,
    (at, id): (&str, &str),
    order: Order,
    cursor: &Cursor,
    size: u32,
) -> Search {
    let n = size + 1;
    match (cursor, order) {
        (Cursor::Top, Order::NewestFirst) => search.newest_first(at, id, None, n),
        (Cursor::Top, Order::OldestFirst) => search.oldest_first(at, id, None, n),
        (Cursor::Before(p), _) => search.newest_first(at, id, Some(p), n),
        (Cursor::After(p), _) => search.oldest_first(at, id, Some(p), n),
    }
}

/// One page of a list in its order, with the cursors of its links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyset<T> {
    pub rows: Vec<T>,
    pub order: Order,
    /// The cursor of the page before this one in the list's order.
    pub previous: Option<(Side, String)>,
    /// The cursor of the page after this one in the list's order.
    pub next: Option<(Side, String)>,
    /// Whether this is the first page: asked for from the top, or reached
    /// going back with nothing before it.
    pub first: bool,
}

impl<T> Keyset<T> {
    /// A list of `rows` that fit on one page: no links.
    pub fn one_page(rows: Vec<T>, order: Order) -> Keyset<T> {
        Keyset {
            rows,
            order,
            previous: None,
            next: None,
            first: true,
        }
    }
}

/// Which query field a cursor goes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

impl Side {
    pub fn field(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::After => "after",
        }
    }
}

/// The page of `size` rows that `keyset` read (`fetched`, in the order
/// it read them), put in the list's order; `position`: a row's `(at, id)`.
pub fn keyset_page<T>(
    order: Order,
    cursor: &Cursor,
    size: u32,
    mut fetched: Vec<T>,
    position: impl Fn(&T) -> (i64, &str),
) -> Keyset<T> {
    // Reading towards the list's end (older rows of a newest-first list),
    // or back towards its start.
    let forward = match (cursor, order) {
        (Cursor::Top, _) => true,
        (Cursor::Before(_), o) => o == Order::NewestFirst,
        (Cursor::After(_), o) => o == Order::OldestFirst,
    };
    let more = fetched.len() > size as usize;
    fetched.truncate(size as usize);
    if !forward {
        fetched.reverse();
    }
    // The side of a cursor that goes on in the list's order, and back.
    let (on, back) = match order {
        Order::NewestFirst => (Side::Before, Side::After),
        Order::OldestFirst => (Side::After, Side::Before),
    };
    let cursor_of = |row: Option<&T>| {
        row.map(|r| {
            let (at, id) = position(r);
            page::encode_position(at, id)
        })
    };
    let has_next = if forward { more } else { true };
    let has_previous = if forward {
        *cursor != Cursor::Top
    } else {
        more
    };
    Keyset {
        next: has_next
            .then(|| cursor_of(fetched.last()))
            .flatten()
            .map(|c| (on, c)),
        previous: has_previous
            .then(|| cursor_of(fetched.first()))
            .flatten()
            .map(|c| (back, c)),
        first: *cursor == Cursor::Top || !(forward || more),
        rows: fetched,
        order,
    }
}

/// The most pages a numbered list goes to: past them, narrow the filters.
pub const MAX_PAGE: u32 = 200;

/// Reads a numbered page (`page`, from 1; empty is the first).
pub fn read_number(text: &str) -> Result<u32, Problem> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(1);
    }
    text.parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_PAGE).contains(n))
        .ok_or_else(|| {
            Problem::out_of_range(
                "page",
                format!(
                    "page must be a number from 1 to {MAX_PAGE}; past that, narrow the filters"
                ),
            )
        })
}

/// Page `number` (from 1) of `size` rows out of `rows`, the list read up
/// to one row past that page; and whether a next page exists.
pub fn numbered<T>(mut rows: Vec<T>, number: u32, size: u32) -> (Vec<T>, bool) {
    let skip = (number.saturating_sub(1) as usize).saturating_mul(size as usize);
    let more = rows.len() > skip + size as usize;
    rows.truncate(skip + size as usize);
    (rows.split_off(skip.min(rows.len())), more)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Row = (i64, String);

    fn rows(times: &[i64]) -> Vec<Row> {
        times.iter().map(|t| (*t, format!("r{t}"))).collect()
    }

    fn at(r: &Row) -> (i64, &str) {
        (r.0, &r.1)
    }

    fn times(k: &Keyset<Row>) -> Vec<i64> {
        k.rows.iter().map(|r| r.0).collect()
    }

    fn position(c: &Option<(Side, String)>) -> Option<(Side, Position)> {
        c.as_ref()
            .map(|(side, c)| (*side, page::decode_position(c).expect("a cursor we made")))
    }

    #[test]
    fn the_first_page_of_a_newest_first_list_leads_to_older_rows_only() {
        let k = keyset_page(Order::NewestFirst, &Cursor::Top, 2, rows(&[9, 8, 7]), at);
        assert_eq!(times(&k), [9, 8], "one row more than a page was read");
        assert_eq!(position(&k.next), Some((Side::Before, (8, "r8".into()))));
        assert_eq!(k.previous, None, "nothing is newer than the first page");
        assert!(k.first);
    }

    #[test]
    fn a_page_reached_going_back_is_shown_in_the_lists_order() {
        // Newer than row 5, read oldest first: 6, 7 and one more.
        let from = Cursor::After((5, "r5".into()));
        let k = keyset_page(Order::NewestFirst, &from, 2, rows(&[6, 7, 8]), at);
        assert_eq!(times(&k), [7, 6]);
        assert_eq!(position(&k.previous), Some((Side::After, (7, "r7".into()))));
        assert_eq!(position(&k.next), Some((Side::Before, (6, "r6".into()))));
        assert!(!k.first);
    }

    #[test]
    fn the_last_page_has_no_next_link_and_the_top_no_previous() {
        let from = Cursor::Before((5, "r5".into()));
        let k = keyset_page(Order::NewestFirst, &from, 2, rows(&[4]), at);
        assert_eq!(times(&k), [4]);
        assert_eq!(k.next, None, "a short page is the end");
        assert!(k.previous.is_some(), "a page after the first leads back");

        let from = Cursor::After((8, "r8".into()));
        let k = keyset_page(Order::NewestFirst, &from, 2, rows(&[9]), at);
        assert_eq!(k.previous, None, "nothing newer than 9");
        assert!(k.first, "back at the top");
        assert!(k.next.is_some());
    }

    #[test]
    fn an_oldest_first_list_goes_on_after_its_last_row() {
        let k = keyset_page(Order::OldestFirst, &Cursor::Top, 2, rows(&[1, 2, 3]), at);
        assert_eq!(times(&k), [1, 2]);
        assert_eq!(position(&k.next), Some((Side::After, (2, "r2".into()))));
        let from = Cursor::Before((3, "r3".into()));
        let k = keyset_page(Order::OldestFirst, &from, 2, rows(&[2, 1]), at);
        assert_eq!(times(&k), [1, 2]);
        assert_eq!(k.previous, None, "1 is the first row");
        assert_eq!(position(&k.next), Some((Side::After, (2, "r2".into()))));
    }

    #[test]
    fn cursors_are_read_from_one_field_at_a_time() {
        assert_eq!(Cursor::read("", " ").unwrap(), Cursor::Top);
        let c = page::encode_position(7, "att_1");
        assert_eq!(
            Cursor::read(&c, "").unwrap(),
            Cursor::Before((7, "att_1".into()))
        );
        assert_eq!(
            Cursor::read("", &c).unwrap(),
            Cursor::After((7, "att_1".into()))
        );
        let both = Cursor::read(&c, &c).unwrap_err();
        assert_eq!(both.field.as_deref(), Some("after"));
        let bad = Cursor::read("not-a-cursor", "").unwrap_err();
        assert_eq!(bad.field.as_deref(), Some("before"));
    }

    #[test]
    fn numbered_pages_are_bounded_and_say_whether_more_follow() {
        assert_eq!(read_number("").unwrap(), 1);
        assert_eq!(read_number("3").unwrap(), 3);
        for bad in ["0", "-1", "x", "201"] {
            let p = read_number(bad).unwrap_err();
            assert_eq!(p.field.as_deref(), Some("page"), "{bad}");
        }
        let list: Vec<u32> = (1..=7).collect();
        assert_eq!(numbered(list.clone(), 1, 3), (vec![1, 2, 3], true));
        assert_eq!(numbered(list.clone(), 2, 3), (vec![4, 5, 6], true));
        assert_eq!(numbered(list.clone(), 3, 3), (vec![7], false));
        assert_eq!(numbered(list[..6].to_vec(), 2, 3), (vec![4, 5, 6], false));
        assert_eq!(numbered(list, 9, 3), (vec![], false));
    }
}
