//! Which rendering of an event an endpoint gets. An endpoint with no pin for
//! the event's type gets it as the producer sent it. One pinned to a version
//! gets, in order: the event itself when it is that version; the producer's
//! rendition at that version; the payload projected onto that version, when
//! the sent version declares itself `compatible_with` it and the projection
//! is valid there; otherwise nothing: the delivery is skipped, never sent in
//! the wrong shape. Pure.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Catalog, project::project};

/// An event's `data` at other versions of its type: version → the exact text
/// sent (see `domain::renditions`, which checks and stores them).
pub type Renditions = BTreeMap<u32, String>;

/// The reason a skipped delivery carries.
pub const NO_RENDERING: &str = "no-rendering-for-pinned-version";

/// What one endpoint gets of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rendering {
    /// The event's own `data`, at its own version.
    AsSent,
    /// `data` at `version`, from the event's renditions.
    Stored { version: u32 },
    /// `data` projected onto `version` now: to be stored with the event.
    Projected { version: u32, data: String },
    /// No valid rendering at the pinned version.
    Skipped,
}

impl Rendering {
    /// The version the delivery is sent at, `None` for the event's own.
    pub fn version(&self) -> Option<u32> {
        match self {
            Rendering::Stored { version } | Rendering::Projected { version, .. } => Some(*version),
            Rendering::AsSent | Rendering::Skipped => None,
        }
    }
}

/// The rendering of an event of `event_type`, sent at `sent` with `payload`
/// and `renditions`, for an endpoint pinned to `pinned` (if at all).
pub fn choose(
    catalog: &Catalog,
    event_type: &str,
    sent: u32,
    payload: &str,
    renditions: &Renditions,
    pinned: Option<u32>,
) -> Rendering {
    let Some(want) = pinned.filter(|v| *v != sent) else {
        return Rendering::AsSent;
    };
    if renditions.contains_key(&want) {
        return Rendering::Stored { version: want };
    }
    let Some(t) = catalog.get(event_type) else {
        return Rendering::Skipped;
    };
    let (Some(from), Some(to)) = (t.version(sent), t.version(want)) else {
        return Rendering::Skipped;
    };
    if !from.compatible_with.contains(&want) {
        return Rendering::Skipped;
    }
    let Ok(data) = serde_json::from_str::<Value>(payload) else {
        return Rendering::Skipped;
    };
    let projected = project(&to.schema, &data);
    if catalog.check(event_type, want, &projected).is_err() {
        return Rendering::Skipped;
    }
    Rendering::Projected {
        version: want,
        data: projected.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v2() -> String {
        json!({"customer_id": "cus_1", "currency": "USD", "final_cost": "1.50", "usage_id": "usage_1",
               "model": "m", "input_tokens": 3, "output_tokens": 4})
        .to_string()
    }

    #[test]
    fn no_pin_or_a_pin_to_the_sent_version_gets_the_event_as_sent() {
        let c = Catalog::bundled();
        let none = Renditions::new();
        assert_eq!(
            choose(&c, "usage.finalized", 2, &v2(), &none, None),
            Rendering::AsSent
        );
        assert_eq!(
            choose(&c, "usage.finalized", 2, &v2(), &none, Some(2)),
            Rendering::AsSent
        );
    }

    #[test]
    fn a_pin_to_an_older_compatible_version_gets_the_projection_valid_there() {
        let c = Catalog::bundled();
        let Rendering::Projected { version: 1, data } =
            choose(&c, "usage.finalized", 2, &v2(), &Renditions::new(), Some(1))
        else {
            panic!("should project onto v1");
        };
        let data: Value = serde_json::from_str(&data).expect("JSON");
        assert!(
            data.get("model").is_none(),
            "v1 does not name model: {data}"
        );
        assert_eq!(data["final_cost"], "1.50");
        assert_eq!(c.check("usage.finalized", 1, &data), Ok(()));
    }

    #[test]
    fn a_producers_rendition_wins_and_a_newer_pin_without_one_is_skipped() {
        let c = Catalog::bundled();
        let v1 =
            json!({"customer_id": "cus_1", "currency": "USD", "final_cost": "1.50"}).to_string();
        let mut given = Renditions::new();
        given.insert(2, v2());
        assert_eq!(
            choose(&c, "usage.finalized", 1, &v1, &given, Some(2)),
            Rendering::Stored { version: 2 }
        );
        assert_eq!(
            choose(&c, "usage.finalized", 1, &v1, &Renditions::new(), Some(2)),
            Rendering::Skipped,
            "nothing projects upwards"
        );
        assert_eq!(
            choose(&c, "usage.finalized", 2, &v2(), &Renditions::new(), Some(7)),
            Rendering::Skipped
        );
    }
}
