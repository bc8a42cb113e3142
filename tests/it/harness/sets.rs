//! Checks over collections of ids: that none of what must be there is
//! missing, with the missing ones named.

/// Asserts that every id of `expected` is `present`; the failure names the
/// ones that are not, after `what`.
pub fn assert_none_missing<'a>(
    expected: impl IntoIterator<Item = &'a str>,
    present: impl Fn(&str) -> bool,
    what: &str,
) {
    let missing: Vec<&str> = expected.into_iter().filter(|id| !present(id)).collect();
    assert!(missing.is_empty(), "{what}: {missing:?}");
}
