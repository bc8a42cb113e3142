//! An endpoint's status and circuit as every page draws them, from the one
//! [`Health`] of each endpoint: the same words and classes on the
//! overview, the endpoints list and the endpoint's page.

use maud::{Markup, html};

use super::when::when;
use crate::dashboard::health::{Health, Phase, Status};

/// The status as a word styled by its name.
pub fn status(s: Status) -> Markup {
    html! { span class={ "status " (s.as_str()) } { (s.as_str()) } }
}

/// The circuit as a badge with what it means now: until when an open one
/// sends nothing, and that a half-open one sends a probe next.
pub fn circuit(p: Phase, now_ms: i64) -> Markup {
    let name = p.name();
    html! {
        span class={ "circuit " (name) } { (name.replace('_', " ")) }
        @match p {
            Phase::Open { until_ms } => { " until " (when(now_ms, until_ms)) }
            Phase::HalfOpen { since_ms } => {
                span.probe { ": the next request is a probe" }
                @if let Some(t) = since_ms { small { " (open until " (when(now_ms, t)) ")" } }
            }
            Phase::Closed => {}
        }
    }
}

/// The circuit of `h` with its consecutive failures.
pub fn circuit_with_failures(h: &Health, now_ms: i64) -> Markup {
    html! {
        (circuit(h.circuit, now_ms)) " · " span.failures { (h.consecutive_failures) } " consecutive failures"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_676_800_000;

    #[test]
    fn a_lapsed_open_period_reads_half_open_with_its_probe_next() {
        let html = circuit(
            Phase::HalfOpen {
                since_ms: Some(NOW - 14_000),
            },
            NOW,
        )
        .into_string();
        assert!(
            html.contains(r#"<span class="circuit half_open">half open</span>"#),
            "{html}"
        );
        assert!(html.contains("the next request is a probe"), "{html}");
        assert!(html.contains(">14 s ago</time>"), "{html}");
        let open = circuit(
            Phase::Open {
                until_ms: NOW + 12_000,
            },
            NOW,
        )
        .into_string();
        assert!(open.contains("open</span> until <time"), "{open}");
        assert!(open.contains(">in 12 s</time>"), "{open}");
    }
}
