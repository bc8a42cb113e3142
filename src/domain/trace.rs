//! W3C Trace Context as an event keeps it: a `traceparent` that parses and,
//! beside it, the `tracestate` that came with it. A malformed context is
//! dropped (the event starts a fresh trace), never refused: tracing must not
//! cost a producer an event.

/// The longest `tracestate` kept (the W3C limit that propagators must pass on).
const MAX_TRACESTATE: usize = 512;

/// A valid trace context, in version-00 form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

impl TraceContext {
    /// The context, or `None` when `traceparent` is not a valid W3C
    /// `traceparent`. A malformed `tracestate` is dropped alone.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let traceparent = normalized(traceparent.trim())?;
        let tracestate = tracestate.map(str::trim).filter(|s| valid_state(s));
        Some(TraceContext {
            traceparent,
            tracestate: tracestate.map(str::to_string),
        })
    }

    /// From the ids of a span (16 and 8 bytes, as lowercase hex) and its
    /// flags; `None` for the all-zero ids that mean "no span".
    pub fn of_span(
        trace_id: &str,
        span_id: &str,
        flags: u8,
        tracestate: Option<&str>,
    ) -> Option<TraceContext> {
        TraceContext::parse(&format!("00-{trace_id}-{span_id}-{flags:02x}"), tracestate)
    }

    /// `00-<trace id>-<parent id>-<flags>`.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id, 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The parent span id, 16 lowercase hex digits.
    pub fn span_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    pub fn flags(&self) -> u8 {
        u8::from_str_radix(&self.traceparent[53..55], 16).unwrap_or(0)
    }
}

/// `traceparent` in version-00 form, if it is valid. A later version is read
/// by its first four fields, as the specification asks of a version-00
/// parser, and passed on as version 00.
fn normalized(text: &str) -> Option<String> {
    let version = text.get(0..2)?;
    if !is_hex(version) || version == "ff" {
        return None;
    }
    let head = match version {
        "00" if text.len() == 55 => text,
        "00" => return None,
        _ if text.len() == 55 || text.as_bytes().get(55) == Some(&b'-') => text.get(..55)?,
        _ => return None,
    };
    let mut parts = head.split('-');
    let (_, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let shaped = trace.len() == 32 && span.len() == 16 && flags.len() == 2;
    let ids_set = !trace.bytes().all(|b| b == b'0') && !span.bytes().all(|b| b == b'0');
    (shaped && ids_set && is_hex(trace) && is_hex(span) && is_hex(flags))
        .then(|| format!("00-{trace}-{span}-{flags}"))
}

/// Lowercase hexadecimal digits only.
fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A `tracestate` hookd can pass on as it came: printable ASCII, within the
/// W3C length, each list member a `key=value`.
fn valid_state(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_TRACESTATE
        && s.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && s.split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .all(|m| m.find('=').is_some_and(|i| i > 0 && i + 1 < m.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_is_kept_with_its_parts() {
        let c = TraceContext::parse(VALID, Some("congo=t61rcWkgMzE")).expect("valid");
        assert_eq!(c.traceparent(), VALID);
        assert_eq!(c.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(c.span_id(), "00f067aa0ba902b7");
        assert_eq!(c.flags(), 1);
        assert_eq!(c.tracestate(), Some("congo=t61rcWkgMzE"));
    }

    #[test]
    fn surrounding_white_space_is_ignored() {
        let c = TraceContext::parse(&format!("  {VALID} "), None).expect("valid");
        assert_eq!(c.traceparent(), VALID);
    }

    #[test]
    fn malformed_traceparents_are_dropped() {
        for bad in [
            "",
            "garbage",
            // Uppercase hex, all-zero ids, the forbidden version, wrong lengths.
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad:?} was kept");
        }
    }

    #[test]
    fn a_later_version_is_read_by_its_first_fields_and_passed_on_as_version_00() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-whatever";
        let c = TraceContext::parse(later, None).expect("a later version is read");
        assert_eq!(c.traceparent(), VALID);
        let glued = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x";
        assert_eq!(TraceContext::parse(glued, None), None);
    }

    #[test]
    fn a_malformed_tracestate_is_dropped_and_the_traceparent_kept() {
        for bad in [
            "",
            "novalue",
            "=v",
            "k=",
            "a=1,\u{7f}=2",
            &"k=v,".repeat(200),
        ] {
            let c = TraceContext::parse(VALID, Some(bad)).expect("the traceparent stands");
            assert_eq!(c.tracestate(), None, "{bad:?} was kept");
        }
        let c = TraceContext::parse(VALID, Some("a=1, b=2")).expect("valid");
        assert_eq!(c.tracestate(), Some("a=1, b=2"));
    }

    #[test]
    fn a_span_s_ids_make_a_context_and_zero_ids_none() {
        let c = TraceContext::of_span(
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "00f067aa0ba902b7",
            1,
            None,
        );
        assert_eq!(c.map(|c| c.traceparent().to_string()), Some(VALID.into()));
        let zero = TraceContext::of_span(&"0".repeat(32), &"0".repeat(16), 0, None);
        assert_eq!(zero, None);
    }
}
