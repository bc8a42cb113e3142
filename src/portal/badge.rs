//! States as coloured badges, read at a glance: a delivery's state, an
//! endpoint's (active, failing, paused, disabled), what holds a subject,
//! an attempt's answer; and times relative to now, the exact UTC time on
//! hover (`web::when`). The word is always written out: colour only helps.

use maud::{Markup, html};

use crate::{http::partner::endpoint_shapes::EndpointOut, web::when};

/// good (done well), bad (given up, refused), warn (will try again, or
/// waits for a person), busy (on its way), off (closed without sending).
fn tone_of_state(state: &str) -> &'static str {
    match state {
        "delivered" => "good",
        "dead" => "bad",
        "failed" | "paused" => "warn",
        "pending" | "delivering" | "waiting" => "busy",
        _ => "off",
    }
}

fn badge(tone: &str, word: &str) -> Markup {
    html! { span class={ "badge " (tone) } { (word) } }
}

/// A delivery's state as a badge.
pub fn state(state: &str) -> Markup {
    badge(tone_of_state(state), state)
}

/// What an endpoint is doing: `disabled`, `paused`, `failing` (active, and
/// failing since some time) or `active`.
pub fn endpoint_word(e: &EndpointOut) -> &str {
    match (e.status.as_str(), &e.failing_since) {
        ("active", Some(_)) => "failing",
        (status, _) => status,
    }
}

/// An endpoint's status as a badge.
pub fn endpoint(e: &EndpointOut) -> Markup {
    let word = endpoint_word(e);
    let tone = match word {
        "active" => "good",
        "failing" => "warn",
        "disabled" => "bad",
        _ => "off",
    };
    badge(tone, word)
}

/// What holds an ordered subject up, as a badge.
pub fn held_by(why: &str) -> Markup {
    let tone = match why {
        "dead_head" => "bad",
        "retrying" | "paused" => "warn",
        _ => "busy",
    };
    badge(tone, why)
}

/// An attempt's answer: its HTTP status (good for 2xx) and, when it failed,
/// its category (`connect`, `timeout`, `http_status`…).
pub fn answer(status: Option<i32>, category: Option<&str>) -> Markup {
    let ok = status.is_some_and(|s| (200..300).contains(&s)) && category.is_none();
    html! {
        @if let Some(s) = status { (badge(if ok { "good" } else { "bad" }, &s.to_string())) }
        @if let Some(c) = category { @if status.is_some() { " " } (badge("bad", c)) }
        @if status.is_none() && category.is_none() { "–" }
    }
}

/// An RFC 3339 time of the API's shapes, relative to `now_ms`, the exact
/// time on hover; a dash for none.
pub fn time(now_ms: i64, text: Option<impl AsRef<str>>) -> Markup {
    match text {
        Some(t) => when::when_text(now_ms, t.as_ref()),
        None => html! { "–" },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_delivery_state_has_its_tone() {
        let tones: Vec<(&str, &str)> = crate::http::partner::deliveries::STATES
            .iter()
            .map(|s| (*s, tone_of_state(s)))
            .collect();
        assert_eq!(
            tones,
            [
                ("waiting", "busy"),
                ("pending", "busy"),
                ("paused", "warn"),
                ("delivering", "busy"),
                ("delivered", "good"),
                ("failed", "warn"),
                ("dead", "bad"),
                ("cancelled", "off"),
                ("skipped", "off"),
            ]
        );
    }

    #[test]
    fn an_answer_shows_its_status_and_why_it_failed() {
        let ok = answer(Some(204), None).into_string();
        assert_eq!(ok, r#"<span class="badge good">204</span>"#);
        let refused = answer(None, Some("connect")).into_string();
        assert_eq!(refused, r#"<span class="badge bad">connect</span>"#);
        let error = answer(Some(500), Some("http_status")).into_string();
        assert!(
            error.contains(r#"<span class="badge bad">500</span> <span"#),
            "{error}"
        );
        assert_eq!(answer(None, None).into_string(), "–");
    }
}
