//! The scripted suite: the cases a conformance check sends, in order, what
//! each expects, and the exact request each one is. Pure: the secret, the
//! event ids and the time are passed in.

use std::time::Duration;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde_json::json;

use crate::{
    domain::{
        event::{NewEvent, Subject, envelope_with_data},
        ids::EventId,
    },
    signing::SigningKey,
};

/// The event type of every suite request but the deliberately unknown one.
pub const CHECK_TYPE: &str = "webhook.check";
/// The type no receiver knows, still marked as a check.
pub const UNKNOWN_TYPE: &str = "webhook.check.unknown_type";
/// The header that marks every suite request; receivers route marked
/// requests to no business handler.
pub const MARK_HEADER: &str = "webhook-check";
pub const MARK_VALUE: &str = "conformance";
/// Each request's deadline: a valid event must be acknowledged within it.
pub const DEADLINE: Duration = Duration::from_secs(5);
/// An acknowledgement slower than this passes with a warning.
pub const SLOW: Duration = Duration::from_secs(2);
/// How old the stale case's timestamp is (receivers allow 5 minutes).
pub const STALE_BY_SECS: i64 = 600;
/// The `data` of the large case: the largest event hookd delivers by default
/// (`ingest.max_payload_bytes`).
pub const LARGE_DATA_BYTES: usize = 256 * 1024;

/// Whether a case must be acknowledged (2xx) or refused (4xx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Accept,
    Reject,
}

/// One case of the suite, in the order they are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// A valid signed `webhook.check` event.
    Valid,
    /// The same `webhook-id` again, freshly signed (as a retry is).
    Duplicate,
    WrongSignature,
    MissingSignature,
    /// Correctly signed, with a timestamp 10 minutes old.
    StaleTimestamp,
    /// Signed, then the body changed.
    TamperedBody,
    /// A type the receiver does not know.
    UnknownType,
    /// A body with 256 KiB of `data`.
    LargeBody,
}

impl Case {
    pub const ALL: [Case; 8] = [
        Case::Valid,
        Case::Duplicate,
        Case::WrongSignature,
        Case::MissingSignature,
        Case::StaleTimestamp,
        Case::TamperedBody,
        Case::UnknownType,
        Case::LargeBody,
    ];

    /// The name in the scorecard.
    pub fn name(self) -> &'static str {
        match self {
            Case::Valid => "valid_event",
            Case::Duplicate => "duplicate_id",
            Case::WrongSignature => "wrong_signature",
            Case::MissingSignature => "missing_signature",
            Case::StaleTimestamp => "stale_timestamp",
            Case::TamperedBody => "tampered_body",
            Case::UnknownType => "unknown_type",
            Case::LargeBody => "large_body",
        }
    }

    pub fn expect(self) -> Expect {
        match self {
            Case::Valid | Case::Duplicate | Case::UnknownType | Case::LargeBody => Expect::Accept,
            Case::WrongSignature
            | Case::MissingSignature
            | Case::StaleTimestamp
            | Case::TamperedBody => Expect::Reject,
        }
    }
}

/// Who the suite's events are addressed to.
#[derive(Debug, Clone)]
pub struct Target {
    pub check_id: String,
    pub partner_id: String,
    /// The endpoint checked, when it is a registered one.
    pub endpoint_id: Option<String>,
}

/// One request, ready to send.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub event_id: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
}

/// The suite for one check: its target, the key it signs with, and an
/// event id per case (the duplicate shares the valid event's).
pub struct Script {
    target: Target,
    key: SigningKey,
    ids: Vec<EventId>,
}

impl Script {
    pub fn new(target: Target, key: SigningKey, mut next_id: impl FnMut() -> EventId) -> Script {
        // A fresh id for every refused case: a receiver that looked the id
        // up before verifying could otherwise pass them by deduplicating.
        let first = next_id();
        let ids = Case::ALL
            .iter()
            .map(|c| match c {
                Case::Valid | Case::Duplicate => first.clone(),
                _ => next_id(),
            })
            .collect();
        Script { target, key, ids }
    }

    fn id(&self, case: Case) -> &EventId {
        let i = Case::ALL.iter().position(|c| *c == case).unwrap_or(0);
        &self.ids[i]
    }

    /// The envelope of `case` with `value` as `data.value`.
    fn body(&self, case: Case, now: DateTime<Utc>, value: &str) -> Vec<u8> {
        let id = self.id(case);
        let event = NewEvent {
            id: id.clone(),
            event_type: if case == Case::UnknownType {
                UNKNOWN_TYPE
            } else {
                CHECK_TYPE
            }
            .into(),
            partner_id: self.target.partner_id.clone(),
            subject: self.target.endpoint_id.as_ref().map(|e| Subject {
                subject_type: "endpoint".into(),
                id: e.clone(),
                version: None,
            }),
            occurred_at_ms: now.timestamp_millis(),
            occurred_at_given: true,
            schema_version: 1,
            payload: String::new(),
            correlation_id: None,
            renditions: Default::default(),
            trace: None,
        };
        let mut data = json!({
            "check_id": self.target.check_id,
            "case": case.name(),
            "value": value,
            "note": "a conformance check from hookd: verify it, acknowledge it, and route it to no business handler",
        });
        if case == Case::LargeBody {
            let bare = data.to_string().len() + r#","padding":"""#.len();
            data["padding"] = "x".repeat(LARGE_DATA_BYTES.saturating_sub(bare)).into();
        }
        envelope_with_data(&event, 1, &data.to_string())
    }

    /// The request `case` sends at `now`.
    pub fn request(&self, case: Case, now: DateTime<Utc>) -> Outgoing {
        let id = self.id(case).as_str().to_string();
        let body = self.body(case, now, "signed");
        let timestamp = match case {
            Case::StaleTimestamp => now.timestamp() - STALE_BY_SECS,
            _ => now.timestamp(),
        };
        let signature = match case {
            Case::MissingSignature => None,
            Case::WrongSignature => Some(wrong(&self.key.sign(&id, timestamp, &body))),
            _ => Some(self.key.sign(&id, timestamp, &body)),
        };
        let sent = match case {
            Case::TamperedBody => self.body(case, now, "edited"),
            _ => body,
        };
        let mut headers = vec![
            ("content-type", "application/json".to_string()),
            (
                "user-agent",
                concat!("hookd/", env!("CARGO_PKG_VERSION")).to_string(),
            ),
            ("webhook-id", id.clone()),
            ("webhook-timestamp", timestamp.to_string()),
        ];
        if let Some(s) = signature {
            headers.push(("webhook-signature", s));
        }
        headers.push((MARK_HEADER, MARK_VALUE.to_string()));
        Outgoing {
            event_id: id,
            headers,
            body: Bytes::from(sent),
        }
    }
}

/// A well-formed entry of the same scheme that matches nothing: the right
/// one, every bit flipped.
fn wrong(entry: &str) -> String {
    let (scheme, encoded) = entry.split_once(',').unwrap_or(("v1", entry));
    let flipped: Vec<u8> = STANDARD
        .decode(encoded)
        .unwrap_or_default()
        .iter()
        .map(|b| !b)
        .collect();
    format!("{scheme},{}", STANDARD.encode(flipped))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;
    use crate::secret::Secret;
    use crate::signing::{DEFAULT_TOLERANCE_SECS, VerifyError, verify};

    fn script(secret: &Secret) -> Script {
        let mut n = 0u32;
        Script::new(
            Target {
                check_id: "chk_1".into(),
                partner_id: "ptn_1".into(),
                endpoint_id: Some("ep_1".into()),
            },
            SigningKey::Hmac(secret.clone()),
            move || {
                n += 1;
                EventId::parse(&format!("evt_01JD0000000000000000000{n:03}")).expect("an id")
            },
        )
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap()
    }

    fn header<'a>(o: &'a Outgoing, name: &str) -> &'a str {
        o.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// How a receiver with `secret` judges the request.
    fn verified(secret: &Secret, o: &Outgoing) -> Result<(), VerifyError> {
        verify(
            secret,
            header(o, "webhook-id"),
            header(o, "webhook-timestamp"),
            header(o, "webhook-signature"),
            &o.body,
            now().timestamp(),
            DEFAULT_TOLERANCE_SECS,
        )
    }

    #[test]
    fn the_cases_a_receiver_must_accept_verify_and_the_others_fail_for_their_own_reason() {
        let secret = Secret::generate();
        let s = script(&secret);
        for case in Case::ALL {
            let got = verified(&secret, &s.request(case, now()));
            let want = match case {
                Case::WrongSignature | Case::TamperedBody => Err(VerifyError::NoMatchingSignature),
                Case::MissingSignature => Err(VerifyError::MissingHeader("webhook-signature")),
                Case::StaleTimestamp => Err(VerifyError::TimestampTooOld),
                _ => Ok(()),
            };
            assert_eq!(got, want, "{} is verified as expected", case.name());
            assert_eq!(
                got.is_ok(),
                case.expect() == Expect::Accept,
                "{}: a case a receiver must accept verifies, and only those",
                case.name()
            );
        }
    }

    #[test]
    fn the_duplicate_repeats_the_valid_events_id_and_every_other_case_has_its_own() {
        let s = script(&Secret::generate());
        let ids: Vec<String> = Case::ALL
            .iter()
            .map(|c| s.request(*c, now()).event_id)
            .collect();
        assert_eq!(ids[0], ids[1], "the duplicate carries the same webhook-id");
        let mut distinct = ids[1..].to_vec();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 7, "the other cases have ids of their own");
    }

    #[test]
    fn every_request_is_marked_as_a_check_and_only_the_unknown_case_has_another_type() {
        let s = script(&Secret::generate());
        for case in Case::ALL {
            let o = s.request(case, now());
            assert_eq!(header(&o, MARK_HEADER), MARK_VALUE, "{}", case.name());
            let body: serde_json::Value = serde_json::from_slice(&o.body).expect("JSON");
            let want = if case == Case::UnknownType {
                UNKNOWN_TYPE
            } else {
                CHECK_TYPE
            };
            assert_eq!(body["type"], want, "{}", case.name());
            assert_eq!(body["event_id"], o.event_id.as_str());
            assert_eq!(body["subject"]["id"], "ep_1");
        }
    }

    #[test]
    fn the_large_case_carries_256_kib_of_data() {
        let o = script(&Secret::generate()).request(Case::LargeBody, now());
        let body: serde_json::Value = serde_json::from_slice(&o.body).expect("JSON");
        assert_eq!(body["data"].to_string().len(), LARGE_DATA_BYTES);
        assert!(o.body.len() > LARGE_DATA_BYTES);
    }

    #[test]
    fn the_stale_case_is_ten_minutes_old_and_the_tampered_body_differs_only_in_its_value() {
        let s = script(&Secret::generate());
        let stale = s.request(Case::StaleTimestamp, now());
        assert_eq!(
            header(&stale, "webhook-timestamp"),
            (now().timestamp() - 600).to_string()
        );
        let tampered = s.request(Case::TamperedBody, now());
        let text = String::from_utf8_lossy(&tampered.body);
        assert!(text.contains(r#""value":"edited""#), "{text}");
    }
}
