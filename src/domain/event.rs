//! Events: what a producer sends, parsed into a validated `NewEvent`, and the
//! envelope bytes every delivery of it carries (identical across retries).

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, value::RawValue};

pub(super) mod field;

pub use field::{FieldError, FieldErrorKind};
// The rule for a type's name is the catalog's, which refuses files that break it.
pub use crate::catalog::valid_event_type;

use self::field::{check_against, field_error};
use super::trace::TraceContext;
use super::{ids::EventId, renditions::Renditions};
use crate::catalog::Catalog;

/// A producer's event, as JSON. Unknown fields are refused so typos surface.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventInput {
    pub event_id: Option<String>,
    #[serde(rename = "type")]
    pub event_type: Option<String>,
    pub partner_id: Option<String>,
    /// As sent, byte for byte: delivered verbatim.
    pub data: Option<Box<RawValue>>,
    pub subject: Option<SubjectInput>,
    pub occurred_at: Option<String>,
    pub correlation_id: Option<String>,
    /// An integer (`2`); a string of digits (`"2"`) is read the same. The
    /// type's latest version when absent.
    pub schema_version: Option<Box<RawValue>>,
    /// `data` at other versions of the type, for endpoints pinned to them:
    /// `{"1": {...}}`, each checked against its version's schema.
    pub renditions: Option<std::collections::BTreeMap<String, Box<RawValue>>>,
    /// The producer's W3C trace context for this event (in a batch, each
    /// event may carry its own); a malformed one is dropped, never refused.
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubjectInput {
    #[serde(rename = "type")]
    pub subject_type: String,
    pub id: String,
    pub version: Option<i64>,
}

/// The thing the producer's event is about, with its version for staleness checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subject {
    #[serde(rename = "type")]
    pub subject_type: String,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
}

/// A validated event, ready for the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    pub id: EventId,
    pub event_type: String,
    pub partner_id: String,
    pub subject: Option<Subject>,
    pub occurred_at_ms: i64,
    /// Whether the producer gave `occurred_at` (an idempotent retry without it
    /// must not conflict only because the clock moved).
    pub occurred_at_given: bool,
    /// The catalog version `payload` was checked against.
    pub schema_version: u32,
    /// `data` exactly as the producer sent it (every number, exponent and
    /// escape as written): the receiver gets these bytes.
    pub payload: String,
    pub correlation_id: Option<String>,
    /// `data` at other versions (sent by the producer, or projected at
    /// fanout), each as the exact text sent to endpoints pinned to it.
    pub renditions: Renditions,
    /// The trace the event's publication and attempts join (not content:
    /// an idempotent repeat keeps the first one's).
    pub trace: Option<TraceContext>,
}

/// `schema_version` as sent: a positive integer, or a string of its digits.
fn parse_version(raw: &RawValue) -> Result<u32, FieldError> {
    let text = raw.get();
    let digits = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    match digits.parse::<u32>() {
        Ok(v) if v >= 1 && digits.bytes().all(|b| b.is_ascii_digit()) => Ok(v),
        _ => Err(field_error(
            "schema_version",
            "must be a positive integer, like 1",
        )),
    }
}

fn short_text(field: &str, value: &str, max: usize) -> Result<(), FieldError> {
    if value.is_empty() || value.len() > max || value.chars().any(char::is_control) {
        return Err(field_error(
            field,
            format!("must be 1 to {max} characters without control characters"),
        ));
    }
    Ok(())
}

impl EventInput {
    /// Validates the input, `data` against its type's schema in `catalog`;
    /// `now_ms` fills `occurred_at` when absent.
    pub fn validate(
        self,
        now_ms: i64,
        max_payload_bytes: usize,
        catalog: &Catalog,
    ) -> Result<NewEvent, FieldError> {
        let id = match self.event_id {
            Some(id) => EventId::parse(&id).map_err(|e| field_error("event_id", e.to_string()))?,
            None => EventId::generate(),
        };
        let event_type = self
            .event_type
            .ok_or_else(|| field_error("type", "is required"))?;
        if !valid_event_type(&event_type) {
            return Err(field_error(
                "type",
                "must look like `usage.finalized`: lowercase words joined by dots",
            ));
        }
        let partner_id = self
            .partner_id
            .ok_or_else(|| field_error("partner_id", "is required"))?;
        short_text("partner_id", &partner_id, 128)?;
        let data = self
            .data
            .ok_or_else(|| field_error("data", "is required"))?;
        if !data.get().starts_with('{') {
            return Err(field_error("data", "must be a JSON object"));
        }
        let payload = data.get().to_string();
        if payload.len() > max_payload_bytes {
            return Err(FieldError {
                field: "data".into(),
                problem: format!(
                    "is {} bytes, more than the {max_payload_bytes} allowed",
                    payload.len()
                ),
                kind: FieldErrorKind::TooLarge,
            });
        }
        let subject = match self.subject {
            None => None,
            Some(s) => {
                short_text("subject.type", &s.subject_type, 128)?;
                short_text("subject.id", &s.id, 256)?;
                if s.version.is_some_and(|v| v < 0) {
                    return Err(field_error("subject.version", "must not be negative"));
                }
                Some(Subject {
                    subject_type: s.subject_type,
                    id: s.id,
                    version: s.version,
                })
            }
        };
        let (occurred_at_ms, occurred_at_given) = match self.occurred_at {
            None => (now_ms, false),
            Some(text) => {
                let t = DateTime::parse_from_rfc3339(&text).map_err(|_| {
                    field_error(
                        "occurred_at",
                        "must be an RFC 3339 time like 2026-10-15T14:22:31Z",
                    )
                })?;
                (t.with_timezone(&Utc).timestamp_millis(), true)
            }
        };
        if let Some(c) = &self.correlation_id {
            short_text("correlation_id", c, 256)?;
        }
        let schema_version = match &self.schema_version {
            Some(raw) => parse_version(raw)?,
            None => catalog.default_version(&event_type),
        };
        check_against(catalog, &event_type, schema_version, &payload, "data")?;
        let renditions = match &self.renditions {
            None => Renditions::new(),
            Some(given) => super::renditions::checked(
                given,
                schema_version,
                &event_type,
                catalog,
                max_payload_bytes,
            )?,
        };
        Ok(NewEvent {
            id,
            event_type,
            partner_id,
            subject,
            occurred_at_ms,
            occurred_at_given,
            schema_version,
            payload,
            correlation_id: self.correlation_id,
            renditions,
            trace: self
                .traceparent
                .as_deref()
                .and_then(|t| TraceContext::parse(t, self.tracestate.as_deref())),
        })
    }
}

impl NewEvent {
    /// Whether a stored event is this same event (an idempotent retry), as
    /// opposed to different content under a reused id.
    pub fn same_content_as(&self, stored: &NewEvent) -> bool {
        self.id == stored.id
            && self.event_type == stored.event_type
            && self.partner_id == stored.partner_id
            && self.subject == stored.subject
            && self.schema_version == stored.schema_version
            && same_json(&self.payload, &stored.payload)
            && self.correlation_id == stored.correlation_id
            && (!self.occurred_at_given || self.occurred_at_ms == stored.occurred_at_ms)
    }
}

/// Whether two JSON texts hold the same value (key order and white space
/// aside; numbers compared as written), for idempotent retries.
fn same_json(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (serde_json::from_str::<Value>(a), serde_json::from_str::<Value>(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

#[derive(Serialize)]
struct EnvelopeHead<'a> {
    event_id: &'a str,
    #[serde(rename = "type")]
    event_type: &'a str,
    occurred_at: String,
    partner_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a Subject>,
    schema_version: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    correlation_id: Option<&'a str>,
}

/// RFC 3339 in UTC with a `Z`, milliseconds only when there are some.
pub fn format_time(ms: i64) -> String {
    super::clock::from_ms(ms).to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// The envelope as JSON held verbatim, for API answers that must show
/// exactly what deliveries carry (a parsed value would respell numbers).
pub fn envelope_json(e: &NewEvent) -> Box<RawValue> {
    let text = String::from_utf8(envelope(e)).unwrap_or_else(|_| "{}".into());
    RawValue::from_string(text)
        .unwrap_or_else(|_| RawValue::from_string("{}".into()).expect("{} is JSON"))
}

/// The envelope of DESIGN §4 as the exact bytes sent and signed.
pub fn envelope(e: &NewEvent) -> Vec<u8> {
    envelope_with_data(e, e.schema_version, &e.payload)
}

/// The envelope at `version`: the event's own `data`, or its rendition at
/// that version; `None` when it has none.
pub fn envelope_at(e: &NewEvent, version: u32) -> Option<Vec<u8>> {
    if version == e.schema_version {
        return Some(envelope(e));
    }
    let data = e.renditions.get(&version)?;
    Some(envelope_with_data(e, version, data))
}

/// The envelope a delivery sent at `version` carries (`None`: the event's
/// own version); `None` when the event holds no rendition at that version.
pub fn envelope_for(e: &NewEvent, version: Option<u32>) -> Option<Vec<u8>> {
    match version {
        None => Some(envelope(e)),
        Some(v) => envelope_at(e, v),
    }
}

/// The envelope of `e` carrying `data` as its version `schema_version`.
pub fn envelope_with_data(e: &NewEvent, schema_version: u32, data: &str) -> Vec<u8> {
    let head = EnvelopeHead {
        event_id: e.id.as_str(),
        event_type: &e.event_type,
        occurred_at: format_time(e.occurred_at_ms),
        partner_id: &e.partner_id,
        subject: e.subject.as_ref(),
        schema_version,
        correlation_id: e.correlation_id.as_deref(),
    };
    // The head serializes as an object; splice `data` in verbatim, so the
    // producer's own bytes are what goes on the wire.
    let mut out = serde_json::to_vec(&head).unwrap_or_else(|_| b"{}".to_vec());
    out.pop();
    out.extend_from_slice(b",\"data\":");
    out.extend_from_slice(data.as_bytes());
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> Catalog {
        Catalog::bundled().with_strict(false)
    }

    fn input(v: Value) -> EventInput {
        serde_json::from_str(&v.to_string()).expect("test input should deserialize")
    }

    fn usage_event() -> Value {
        json!({"type": "usage.finalized", "partner_id": "partner_42",
               "event_id": "evt_01JAAAAAAAAAAAAAAAAAAAAAAA",
               "occurred_at": "2026-10-15T14:22:31Z",
               "subject": {"type": "usage_record", "id": "usage_9182", "version": 7},
               "correlation_id": "op_7fd", "schema_version": 1,
               "data": {"final_cost": "1.274800", "currency": "USD", "customer_id": "cus_204"}})
    }

    #[test]
    fn the_envelope_matches_the_published_shape_with_data_keys_sorted() {
        let e = input(usage_event())
            .validate(0, 1024, &catalog())
            .expect("valid event");
        let body = String::from_utf8(envelope(&e)).expect("utf-8");
        assert_eq!(
            body,
            r#"{"event_id":"evt_01JAAAAAAAAAAAAAAAAAAAAAAA","type":"usage.finalized","occurred_at":"2026-10-15T14:22:31Z","partner_id":"partner_42","subject":{"type":"usage_record","id":"usage_9182","version":7},"schema_version":1,"correlation_id":"op_7fd","data":{"currency":"USD","customer_id":"cus_204","final_cost":"1.274800"}}"#
        );
        let parsed: Value = serde_json::from_str(&body).expect("the envelope is JSON");
        assert_eq!(parsed["data"]["final_cost"], "1.274800");
    }

    #[test]
    fn missing_and_malformed_fields_are_named() {
        let cases = [
            (json!({"partner_id": "p", "data": {}}), "type"),
            (json!({"type": "a.b", "data": {}}), "partner_id"),
            (json!({"type": "a.b", "partner_id": "p"}), "data"),
            (
                json!({"type": "a.b", "partner_id": "p", "data": [1]}),
                "data",
            ),
            (
                json!({"type": "Not A Type", "partner_id": "p", "data": {}}),
                "type",
            ),
            (
                json!({"type": "a.b", "partner_id": "p", "data": {}, "occurred_at": "yesterday"}),
                "occurred_at",
            ),
            (
                json!({"type": "a.b", "partner_id": "p", "data": {}, "event_id": "42"}),
                "event_id",
            ),
        ];
        for (value, field) in cases {
            let err = input(value.clone())
                .validate(0, 1024, &catalog())
                .expect_err("should be refused");
            assert_eq!(
                err.field, field,
                "{value} should fail on {field}, failed on {err}"
            );
        }
    }

    #[test]
    fn an_oversize_payload_is_too_large_not_merely_invalid() {
        let big = "x".repeat(2000);
        let err = input(json!({"type": "a.b", "partner_id": "p", "data": {"blob": big}}))
            .validate(0, 1024, &catalog())
            .expect_err("over the cap");
        assert!(
            err.kind == FieldErrorKind::TooLarge && err.field == "data",
            "{err:?}"
        );
    }

    #[test]
    fn a_retry_without_occurred_at_is_the_same_event_but_changed_data_is_not() {
        let mut v = usage_event();
        v.as_object_mut().map(|o| o.remove("occurred_at"));
        let first = input(v.clone())
            .validate(1_000, 1024, &catalog())
            .expect("valid");
        let retry = input(v.clone())
            .validate(9_000, 1024, &catalog())
            .expect("valid");
        assert!(retry.same_content_as(&first));
        v["data"]["final_cost"] = json!("9.99");
        let changed = input(v).validate(9_000, 1024, &catalog()).expect("valid");
        assert!(!changed.same_content_as(&first));
    }
}

#[cfg(test)]
mod catalog_tests;
