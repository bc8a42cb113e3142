//! Several refusals as one problem: a batch's refused events, each error
//! with the JSON pointer of its value, at most [`MAX_LISTED`] listed.

use serde::Serialize;

use super::Problem;

/// The most errors one answer lists; `more_errors` counts the rest.
pub const MAX_LISTED: usize = 20;

/// One of the things wrong with a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ProblemError {
    /// The kind of wrong, as the problem's own `type`.
    #[serde(rename = "type")]
    pub kind: String,
    /// An RFC 6901 JSON pointer to the value in the request body
    /// (`/events/3/data/balance`; `/events/3/type` for a missing `type`).
    pub pointer: String,
    pub message: String,
}

impl Problem {
    /// Every refusal of a request with several parts (a batch's events) as
    /// one answer. The first refusal gives the status, `type`, `field` and
    /// `detail`; `errors` lists up to [`MAX_LISTED`], each refused part
    /// before any part's second error, in request order; `more_errors`
    /// counts the rest. `of` is how many parts the request has.
    pub fn of_many(refusals: Vec<(Problem, Vec<ProblemError>)>, of: usize) -> Option<Problem> {
        let refused = refusals.len();
        let mut lists: Vec<Vec<ProblemError>> =
            refusals.iter().map(|(_, errors)| errors.clone()).collect();
        let (mut first, _) = refusals.into_iter().next()?;
        let total: usize = lists.iter().map(Vec::len).sum();
        let listed = pick_breadth_first(&mut lists, MAX_LISTED);
        if refused > 1 {
            first.detail = format!(
                "{refused} of the {of} events are refused (`errors` lists each); the first: {}",
                first.detail
            );
        }
        first.more_errors = (total > listed.len()).then(|| total - listed.len());
        first.errors = Some(listed);
        Some(first)
    }
}

/// Up to `max` errors: the first of each list, then the second of each, and
/// so on; returned in list order.
fn pick_breadth_first(lists: &mut [Vec<ProblemError>], max: usize) -> Vec<ProblemError> {
    let mut taken = vec![0; lists.len()];
    let mut count = 0;
    let deepest = lists.iter().map(Vec::len).max().unwrap_or(0);
    'rounds: for round in 0..deepest {
        for (i, list) in lists.iter().enumerate() {
            if count == max {
                break 'rounds;
            }
            if round < list.len() {
                taken[i] += 1;
                count += 1;
            }
        }
    }
    lists
        .iter_mut()
        .zip(taken)
        .flat_map(|(list, n)| list.drain(..n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(event: usize, errors: usize) -> (Problem, Vec<ProblemError>) {
        let p = Problem::invalid(format!("events[{event}].data"), format!("event {event}"));
        let listed = (0..errors)
            .map(|e| ProblemError {
                kind: p.kind.clone(),
                pointer: format!("/events/{event}/data/{e}"),
                message: format!("error {e}"),
            })
            .collect();
        (p, listed)
    }

    #[test]
    fn every_refused_part_is_listed_before_any_part_s_second_error() {
        // 25 bad events of 3 errors each: the first 20 events, one error each.
        let p =
            Problem::of_many((0..25).map(|i| refused(i * 2, 3)).collect(), 60).expect("refused");
        let errors = p.errors.as_deref().unwrap_or_default();
        assert_eq!(errors.len(), MAX_LISTED);
        let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
        let wanted: Vec<String> = (0..20)
            .map(|i| format!("/events/{}/data/0", i * 2))
            .collect();
        assert_eq!(pointers, wanted);
        assert_eq!(p.more_errors, Some(75 - 20), "the rest are counted");
        assert_eq!(
            p.field.as_deref(),
            Some("events[0].data"),
            "the first names `field`"
        );
        assert!(p.detail.starts_with("25 of the 60 events"), "{}", p.detail);
    }

    #[test]
    fn spare_room_goes_to_further_errors_in_request_order() {
        let p = Problem::of_many(vec![refused(1, 15), refused(4, 2), refused(7, 12)], 9)
            .expect("refused");
        let pointers: Vec<String> = p
            .errors
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.pointer)
            .collect();
        assert_eq!(pointers.len(), 20);
        assert!(pointers.iter().any(|p| p.starts_with("/events/4/")));
        let events: Vec<&str> = pointers.iter().map(|p| &p[..10]).collect();
        let mut sorted = events.clone();
        sorted.sort();
        assert_eq!(events, sorted, "listed in request order: {pointers:?}");
        assert_eq!(p.more_errors, Some(29 - 20));
    }

    #[test]
    fn one_refusal_keeps_its_own_words_and_nothing_is_left_to_count() {
        let p = Problem::of_many(vec![refused(3, 1)], 5).expect("refused");
        assert_eq!(p.detail, "event 3");
        assert_eq!(p.more_errors, None);
        assert_eq!(p.errors.map(|e| e.len()), Some(1));
        assert!(Problem::of_many(Vec::new(), 5).is_none());
    }
}
