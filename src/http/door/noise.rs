//! Client errors in the log. The HTTP parser logs every malformed request it
//! refuses as an ERROR (`stream error: request parse error: …`), one line a
//! request, so a scanner could fill the log and page an operator with what
//! is the client's fault. Those lines are held back (`ParserNoise`); the
//! door logs the refusals it answers as a WARN instead (`refused`), at most
//! one line every `EVERY`, each saying how many it left out (`Sampled`).

use std::{
    fmt,
    net::IpAddr,
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use tracing::{
    Event, Level, Subscriber,
    field::{Field, Visit},
};
use tracing_subscriber::layer::{Context, Layer};

/// At most one line about client errors this often.
pub const EVERY: Duration = Duration::from_secs(10);

/// Where actix-http's HTTP/1 dispatcher logs.
const DISPATCHER: &str = "actix_http::h1::dispatcher";

/// Lets one line through per period and counts the rest.
#[derive(Debug)]
pub struct Sampled {
    every_ms: u64,
    next_ms: AtomicU64,
    left_out: AtomicU64,
}

impl Sampled {
    pub fn new(every: Duration) -> Sampled {
        Sampled {
            every_ms: u64::try_from(every.as_millis()).unwrap_or(u64::MAX),
            next_ms: AtomicU64::new(0),
            left_out: AtomicU64::new(0),
        }
    }

    /// Whether a line may be written at `now_ms` (on any clock that only
    /// goes forward); if so, how many were left out since the last one.
    pub fn take(&self, now_ms: u64) -> Option<u64> {
        let next = self.next_ms.load(Ordering::Acquire);
        let due = now_ms >= next
            && self
                .next_ms
                .compare_exchange(
                    next,
                    now_ms.saturating_add(self.every_ms),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok();
        if due {
            Some(self.left_out.swap(0, Ordering::AcqRel))
        } else {
            self.left_out.fetch_add(1, Ordering::AcqRel);
            None
        }
    }
}

/// Logs a request the door answered with a client error problem, if
/// `sampled` lets a line through now.
pub fn refused(sampled: &Sampled, now_ms: u64, peer: IpAddr, status: u16, problem: &str) {
    if let Some(left_out) = sampled.take(now_ms) {
        tracing::warn!(
            %peer,
            status,
            problem,
            left_out,
            "refused a request the HTTP parser could not take (at most one such line every {} s; \
             left_out: how many since the last)",
            EVERY.as_secs()
        );
    }
}

/// Whether a line of actix-http's dispatcher is about the client's fault: a
/// request it could not parse (which the door answers and logs itself), or
/// a connection the client broke.
pub fn is_client_error(message: &str) -> bool {
    [
        "stream error: request parse error",
        "stream error: I/O error",
    ]
    .iter()
    .any(|prefix| message.starts_with(prefix))
}

/// A layer that holds back the HTTP parser's ERROR lines about clients'
/// errors; the server's own errors still pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParserNoise;

impl<S: Subscriber> Layer<S> for ParserNoise {
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        let meta = event.metadata();
        if *meta.level() != Level::ERROR || meta.target() != DISPATCHER {
            return true;
        }
        let mut message = Message::default();
        event.record(&mut message);
        !is_client_error(&message.0)
    }
}

/// The `message` field of an event, as text.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt as _;

    #[test]
    fn the_first_client_error_is_logged_and_the_next_ones_counted_until_the_period_ends() {
        let sampled = Sampled::new(Duration::from_secs(10));
        assert_eq!(sampled.take(5), Some(0), "the first line goes at once");
        assert_eq!(sampled.take(6), None);
        assert_eq!(sampled.take(9_000), None);
        assert_eq!(sampled.take(10_004), None, "not quite ten seconds");
        assert_eq!(
            sampled.take(10_005),
            Some(3),
            "the next says what it left out"
        );
        assert_eq!(sampled.take(10_006), None);
    }

    #[test]
    fn parse_and_io_errors_are_the_clients_and_the_rest_the_servers() {
        assert!(is_client_error(
            "stream error: request parse error: invalid Header provided"
        ));
        assert!(is_client_error("stream error: I/O error: connection reset"));
        assert!(!is_client_error("stream error: service error"));
        assert!(!is_client_error("stream error: body error: boom"));
        assert!(!is_client_error("Internal server error: unexpected eof"));
    }

    /// Everything a subscriber writes, shared with the test.
    #[derive(Clone, Default)]
    struct Written(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Written {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_parsers_error_lines_about_clients_are_held_back_and_the_servers_kept() {
        let written = Written::default();
        let sink = written.clone();
        let subscriber = tracing_subscriber::registry().with(ParserNoise).with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || sink.clone()),
        );
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "actix_http::h1::dispatcher", "stream error: {}", "request parse error: invalid Header provided");
            tracing::error!(target: "actix_http::h1::dispatcher", "stream error: {}", "service error");
            tracing::error!(target: "hookd::somewhere", "stream error: request parse error: ours");
        });
        let text = String::from_utf8(written.0.lock().expect("the log").clone()).expect("utf-8");
        assert!(!text.contains("invalid Header"), "held back: {text}");
        assert!(
            text.contains("service error"),
            "the server's error is kept: {text}"
        );
        assert!(text.contains("ours"), "only the dispatcher's lines: {text}");
    }
}
