//! Ordered delivery per subject: an endpoint may ask that, for each subject
//! (the envelope's `subject.type` and `subject.id`), its deliveries are
//! attempted one at a time in feed order. The head of a subject is due like
//! any delivery; those behind it wait until it is delivered, dead, cancelled
//! or skipped. This module holds the settings and the pure placing of new
//! deliveries; the store keeps the order true in the database.

use std::collections::HashSet;

/// Whether an endpoint orders its deliveries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ordering {
    /// Deliveries go as they come, up to the endpoint's concurrency.
    #[default]
    None,
    /// One delivery at a time per subject, in feed order.
    Subject,
}

impl Ordering {
    pub const ALL: [Ordering; 2] = [Ordering::None, Ordering::Subject];

    pub fn as_str(self) -> &'static str {
        match self {
            Ordering::None => "none",
            Ordering::Subject => "subject",
        }
    }

    pub fn parse(s: &str) -> Option<Ordering> {
        Self::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// What a subject does when its head dies (its retries ran out).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnDead {
    /// The next delivery of the subject goes; the dead one stays
    /// recoverable, and its replay arrives out of order (and says so).
    #[default]
    Skip,
    /// The subject waits until its dead head is replayed successfully or
    /// skipped, by the partner or an operator.
    Hold,
}

impl OnDead {
    pub const ALL: [OnDead; 2] = [OnDead::Skip, OnDead::Hold];

    pub fn as_str(self) -> &'static str {
        match self {
            OnDead::Skip => "skip",
            OnDead::Hold => "hold",
        }
    }

    pub fn parse(s: &str) -> Option<OnDead> {
        Self::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// The key a subject's deliveries share: the subject's type and id, kept
/// apart whatever characters they hold.
pub fn subject_key(subject_type: &str, subject_id: &str) -> String {
    serde_json::json!([subject_type, subject_id]).to_string()
}

/// Where a new delivery starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Due now: it is not ordered, or nothing of its subject is ahead of it.
    Head,
    /// Behind an earlier delivery of its subject.
    Waiting,
}

/// Places new deliveries given in feed order, each as (endpoint, its
/// subject key when the endpoint orders and the event has a subject):
/// a subject that already has a delivery under way (`busy`), or one placed
/// earlier in this batch, gets `Waiting`; the first of a free subject, and
/// every unordered delivery, is a `Head`.
pub fn place<'a>(
    rows: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    busy: &HashSet<(String, String)>,
) -> Vec<Place> {
    let mut taken: HashSet<(&str, &str)> = HashSet::new();
    rows.into_iter()
        .map(|(endpoint, key)| match key {
            None => Place::Head,
            Some(key) => {
                let free = !busy.contains(&(endpoint.to_string(), key.to_string()))
                    && taken.insert((endpoint, key));
                if free { Place::Head } else { Place::Waiting }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(pairs: &[(&str, &str)]) -> HashSet<(String, String)> {
        pairs
            .iter()
            .map(|(e, k)| (e.to_string(), k.to_string()))
            .collect()
    }

    #[test]
    fn the_first_delivery_of_a_free_subject_leads_and_the_rest_wait_behind_it() {
        let rows = [
            ("ep_1", Some("a")),
            ("ep_1", Some("a")),
            ("ep_1", Some("b")),
        ];
        assert_eq!(
            place(rows, &busy(&[])),
            [Place::Head, Place::Waiting, Place::Head]
        );
    }

    #[test]
    fn a_subject_already_under_way_waits_from_its_first_new_delivery() {
        let rows = [("ep_1", Some("a")), ("ep_2", Some("a"))];
        assert_eq!(
            place(rows, &busy(&[("ep_1", "a")])),
            [Place::Waiting, Place::Head],
            "subjects are per endpoint"
        );
    }

    #[test]
    fn unordered_deliveries_always_lead() {
        let rows = [("ep_1", None), ("ep_1", None)];
        assert_eq!(place(rows, &busy(&[])), [Place::Head, Place::Head]);
    }

    #[test]
    fn subject_keys_keep_type_and_id_apart() {
        assert_ne!(subject_key("a\",\"b", "c"), subject_key("a", "b\",\"c"));
        assert_eq!(subject_key("api_key", "key_1"), r#"["api_key","key_1"]"#);
    }

    #[test]
    fn settings_read_back_what_they_write() {
        for o in Ordering::ALL {
            assert_eq!(Ordering::parse(o.as_str()), Some(o));
        }
        for d in OnDead::ALL {
            assert_eq!(OnDead::parse(d.as_str()), Some(d));
        }
        assert_eq!(Ordering::parse("fifo"), None);
    }
}
