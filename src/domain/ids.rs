//! Identifiers: prefixed ULIDs, never sequential integers.

use std::fmt;

/// A new identifier `<prefix>_<ULID>`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new())
}

/// A stable, immutable event id: `evt_` + ULID (ours) or `evt_` + ULID/UUID
/// (given by a producer). Retries and replays carry the same one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be `evt_` followed by a ULID or a UUID, got `{0}`")]
pub struct EventIdError(pub String);

impl EventId {
    pub fn generate() -> EventId {
        EventId(new_id("evt"))
    }
    pub fn parse(s: &str) -> Result<EventId, EventIdError> {
        let rest = s
            .strip_prefix("evt_")
            .ok_or_else(|| EventIdError(s.into()))?;
        let is_ulid = rest.len() == 26 && ulid::Ulid::from_string(rest).is_ok();
        let is_uuid = rest.len() == 36
            && rest.char_indices().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => c == '-',
                _ => c.is_ascii_hexdigit(),
            });
        if is_ulid || is_uuid {
            Ok(EventId(s.to_string()))
        } else {
            Err(EventIdError(s.into()))
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_event_ids_parse_back() {
        let id = EventId::generate();
        assert_eq!(EventId::parse(id.as_str()), Ok(id));
    }

    #[test]
    fn producer_ids_must_be_ulids_or_uuids_under_the_evt_prefix() {
        assert!(EventId::parse("evt_01JAAAAAAAAAAAAAAAAAAAAAAA").is_ok());
        assert!(EventId::parse("evt_0192f6a1-7c3e-7b4a-9d2e-1a2b3c4d5e6f").is_ok());
        for bad in [
            "42",
            "evt_42",
            "01JAAAAAAAAAAAAAAAAAAAAAAA",
            "evt_",
            "evt_0192f6a1x7c3e-7b4a-9d2e-1a2b3c4d5e6f",
        ] {
            assert!(EventId::parse(bad).is_err(), "{bad} should be refused");
        }
    }
}
