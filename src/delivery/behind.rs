//! The endpoints whose actors claim in the database's order (oldest first,
//! after they handed due work back; see `oldest_first`). Fresh work for
//! them is created as rows, not handed over claimed: handed over, it would
//! only be handed back (a row written twice more, claimed and released,
//! for nothing). The committer reads it; the endpoint actors keep it.

use std::{collections::HashSet, sync::Mutex};

#[derive(Debug, Default)]
pub struct Behind(Mutex<HashSet<String>>);

impl Behind {
    /// Records whether `endpoint`'s actor claims in the database's order.
    pub fn set(&self, endpoint: &str, rows_first: bool) {
        let mut set = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if rows_first {
            if !set.contains(endpoint) {
                set.insert(endpoint.to_string());
            }
        } else {
            set.remove(endpoint);
        }
    }

    /// Whether fresh work for `endpoint` must wait as rows.
    pub fn contains(&self, endpoint: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(endpoint)
    }
}

#[cfg(test)]
mod tests {
    use super::Behind;

    #[test]
    fn an_endpoint_is_behind_from_its_hand_back_until_its_claims_catch_up() {
        let behind = Behind::default();
        assert!(!behind.contains("ep_1"));
        behind.set("ep_1", true);
        behind.set("ep_1", true);
        assert!(behind.contains("ep_1"));
        assert!(!behind.contains("ep_2"));
        behind.set("ep_1", false);
        assert!(!behind.contains("ep_1"));
    }
}
