//! The links under a paged table: to the start, back and on, each keeping
//! the page's other query fields and returning to the table.

use maud::{Markup, html};

use super::with_query;
use crate::dashboard::paging::{Keyset, Order};

/// `path` with `pairs` and, if given, one more pair, then `#anchor`.
fn link(path: &str, pairs: &[(&str, &str)], extra: Option<(&str, &str)>, anchor: &str) -> String {
    let mut all = pairs.to_vec();
    all.extend(extra);
    let base = if all.is_empty() {
        path.to_string()
    } else {
        with_query(path, &all)
    };
    format!("{base}#{anchor}")
}

/// The links around a keyset page of the table `#table`: `path` with the
/// page's query `pairs`.
pub fn keyset_links<T>(table: &str, path: &str, pairs: &[(&str, &str)], k: &Keyset<T>) -> Markup {
    let (start, back, on) = match k.order {
        Order::NewestFirst => ("Newest", "← Newer", "Older →"),
        Order::OldestFirst => ("Earliest", "← Earlier", "Later →"),
    };
    if k.first && k.next.is_none() {
        return html! {};
    }
    html! {
        nav.pager id={ (table) "-pages" } aria-label={ "Pages of " (table) } {
            @if !k.first { a.start href=(link(path, pairs, None, table)) { (start) } }
            @if let Some((side, c)) = &k.previous {
                a rel="prev" href=(link(path, pairs, Some((side.field(), c)), table)) { (back) }
            }
            @if let Some((side, c)) = &k.next {
                a rel="next" href=(link(path, pairs, Some((side.field(), c)), table)) { (on) }
            }
        }
    }
}

/// The links around page `number` (from 1) of the table `#table`, of
/// `size` rows; `more`: whether a next page exists.
pub fn numbered_links(
    table: &str,
    path: &str,
    pairs: &[(&str, &str)],
    (number, size, shown): (u32, u32, usize),
    more: bool,
) -> Markup {
    let first = u64::from(number - 1) * u64::from(size);
    let numbers = (
        number.saturating_sub(1).to_string(),
        (number + 1).to_string(),
    );
    html! {
        nav.pager id={ (table) "-pages" } aria-label={ "Pages of " (table) } {
            span.showing {
                @if shown == 0 { "none shown" }
                @else { "showing " (first + 1) "–" (first + shown as u64) }
            }
            @if number > 1 {
                a.start href=(link(path, pairs, None, table)) { "First" }
                @let previous = (number > 2).then_some(("page", numbers.0.as_str()));
                a rel="prev" href=(link(path, pairs, previous, table)) { "← Previous" }
            }
            @if more {
                a rel="next" href=(link(path, pairs, Some(("page", &numbers.1)), table)) { "Next →" }
            }
        }
    }
}
