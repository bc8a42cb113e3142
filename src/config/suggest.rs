//! "Did you mean …?": the known key nearest to a misspelt one, by edit
//! distance on the whole dotted key or on its last part (a key written in the
//! wrong section: `listen` for `http.listen`).

/// Levenshtein distance: the fewest one-character insertions, deletions and
/// substitutions that turn `a` into `b`.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    // `row[j]`: the distance between the prefix of `a` read so far and `b[..j]`.
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// How far `given` is from `known`: the whole keys apart, or their last parts
/// apart plus one for the move between sections, whichever is nearer.
fn distance(given: &str, known: &str) -> usize {
    let split = |k: &str| match k.rsplit_once('.') {
        Some((section, leaf)) => (Some(section.to_string()), leaf.to_string()),
        None => (None, k.to_string()),
    };
    let ((given_section, given_leaf), (known_section, known_leaf)) = (split(given), split(known));
    let moved = usize::from(given_section != known_section);
    levenshtein(given, known).min(levenshtein(&given_leaf, &known_leaf) + moved)
}

/// The nearest of `known` to `given`, if it is near enough to be a typo: at
/// most two edits, or a quarter of the key's length for long keys. Ties go to
/// the first candidate, so the order of `known` decides them.
pub fn nearest<'k>(given: &str, known: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    let limit = (given.chars().count() / 4).max(2);
    known
        .into_iter()
        .map(|k| (distance(given, k), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_single_character_edits() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("abc", ""), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("listen", "listen"), 0);
        assert_eq!(levenshtein("listn", "listen"), 1, "one insertion");
        assert_eq!(levenshtein("lisTen", "listen"), 1, "one substitution");
        assert_eq!(levenshtein("kitten", "sitting"), 3, "the textbook case");
        assert_eq!(levenshtein("flaw", "lawn"), 2);
        assert_eq!(levenshtein("ünï", "uni"), 2, "characters, not bytes");
    }

    const KNOWN: [&str; 6] = [
        "http.listen",
        "http.max_connections",
        "database.max_connections",
        "egress.allow_http",
        "egress.allow_cidrs",
        "log.filter",
    ];

    #[test]
    fn a_typo_finds_its_key() {
        assert_eq!(nearest("http.listn", KNOWN), Some("http.listen"));
        assert_eq!(nearest("htpp.listen", KNOWN), Some("http.listen"));
        assert_eq!(
            nearest("egress.allow_https", KNOWN),
            Some("egress.allow_http")
        );
        assert_eq!(
            nearest("egress_allow_http", KNOWN),
            Some("egress.allow_http"),
            "a single underscore where the section ends is one edit"
        );
    }

    #[test]
    fn a_key_in_the_wrong_section_finds_its_section() {
        assert_eq!(nearest("listen", KNOWN), Some("http.listen"));
        assert_eq!(nearest("log.listen", KNOWN), Some("http.listen"));
    }

    #[test]
    fn the_same_section_wins_a_tie_between_sections() {
        assert_eq!(
            nearest("database.max_conections", KNOWN),
            Some("database.max_connections")
        );
        assert_eq!(
            nearest("http.max_conections", KNOWN),
            Some("http.max_connections")
        );
    }

    #[test]
    fn nothing_is_suggested_for_a_key_that_resembles_none() {
        assert_eq!(nearest("retries", KNOWN), None);
        assert_eq!(nearest("delivery.retries", KNOWN), None);
        assert_eq!(nearest("x", KNOWN), None);
        assert_eq!(nearest("http.listen", []), None);
    }
}
