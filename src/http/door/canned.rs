//! The answers hookd gives before any route runs, as problem+json: a refused
//! connection, and the bare error responses that the HTTP/1 parser writes
//! on its own (400, 408, 431, 500 with no body), which are rewritten on
//! their way out. Pure functions over bytes.

use std::fmt::Write as _;

/// Which line of the request head was the longest since the last response,
/// to tell a too-long request target (414) from a too-long header (431)
/// when the parser says only "bad request".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongLine {
    /// A line that starts like a request line (`GET /…`).
    RequestLine(usize),
    Header(usize),
}

/// The problem+json body for `status`, with its stable type.
fn problem(status: u16, slug: &str, title: &str, detail: &str) -> String {
    serde_json::json!({
        "type": format!("https://hookd.dev/problems/{slug}"),
        "title": title,
        "status": status,
        "detail": detail,
    })
    .to_string()
}

fn response(status: u16, reason: &str, extra_headers: &str, body: &str) -> Vec<u8> {
    let mut out = String::with_capacity(200 + body.len());
    let _ = write!(
        out,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\n{extra_headers}\r\n{body}",
        body.len()
    );
    out.into_bytes()
}

/// What a connection refused at accept gets before it is closed.
pub fn refused(per_address: bool) -> Vec<u8> {
    let detail = if per_address {
        "too many connections from this address are open; close some and retry"
    } else {
        "hookd is at its connection limit; retry shortly"
    };
    response(
        503,
        "Service Unavailable",
        "connection: close\r\nretry-after: 1\r\n",
        &problem(503, "too-many-connections", "Too many connections", detail),
    )
}

/// The problem a bare parser answer stands for: its status, type and body.
fn replacement(
    status: u16,
    long_line: Option<LongLine>,
    max_uri: usize,
) -> (u16, &'static str, String) {
    let (status, slug, title, detail) = match (status, long_line) {
        (400 | 431, Some(LongLine::RequestLine(len))) if len > max_uri => (
            414,
            "uri-too-long",
            "URI too long",
            format!("the request target is longer than {max_uri} bytes"),
        ),
        (400 | 431, Some(LongLine::Header(len))) if len > max_uri => (
            431,
            "headers-too-large",
            "Request header fields too large",
            format!("a header line is {len} bytes; keep each under {max_uri}"),
        ),
        (431, _) => (
            431,
            "headers-too-large",
            "Request header fields too large",
            "the request head is over 128 KiB or has more than 96 headers".to_string(),
        ),
        (408, _) => (
            408,
            "request-timeout",
            "Request timeout",
            "the request head did not arrive in time (http.header_timeout)".to_string(),
        ),
        (500, _) => (
            500,
            "internal",
            "Internal error",
            "an internal error occurred; it has been logged".to_string(),
        ),
        (status, _) => (
            status,
            "bad-request",
            "Bad request",
            "the request is not valid HTTP/1.1: a malformed request line or header, \
             conflicting Content-Length and Transfer-Encoding, or not HTTP at all"
                .to_string(),
        ),
    };
    (status, slug, problem(status, slug, title, &detail))
}

fn reason(status: u16) -> &'static str {
    match status {
        408 => "Request Timeout",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        _ => "Bad Request",
    }
}

/// A bare parser answer's problem+json replacement.
#[derive(Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// How many bytes of the parser's answer it stands for.
    pub consumed: usize,
    pub status: u16,
    /// The problem's type, such as `bad-request`.
    pub problem: &'static str,
    pub bytes: Vec<u8>,
}

/// If `out` starts with an error response that has no body and no type (the
/// parser's own answers), the problem+json response to send in its place.
/// The `connection` and `date` headers are kept, so the connection's fate
/// and framing stay the parser's.
pub fn rewrite(out: &[u8], long_line: Option<LongLine>, max_uri: usize) -> Option<Rewrite> {
    let status = out.strip_prefix(b"HTTP/1.1 ")?.get(..3)?;
    let status: u16 = std::str::from_utf8(status).ok()?.parse().ok()?;
    if !(400..=599).contains(&status) {
        return None;
    }
    let end = out.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&out[..end]).ok()?;
    let mut kept = String::new();
    let mut empty = false;
    for line in head.split("\r\n").skip(1).filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        let name = name.trim().to_ascii_lowercase();
        match name.as_str() {
            "content-type" => return None,
            "content-length" => empty = value.trim() == "0",
            "connection" | "date" => {
                let _ = write!(kept, "{name}: {}\r\n", value.trim());
            }
            _ => {}
        }
    }
    if !empty {
        return None;
    }
    let (status, problem, body) = replacement(status, long_line, max_uri);
    Some(Rewrite {
        consumed: end,
        status,
        problem,
        bytes: response(status, reason(status), &kept, &body),
    })
}

/// Watches the bytes a connection reads for its longest line since the
/// last response, cheaply (one scan for `\n`). A line is a request line
/// when its first token ends in a space (`GET /…`), a header when it ends
/// in a colon.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineWatch {
    current: usize,
    kind: Option<bool>,
    longest: Option<LongLine>,
}

impl LineWatch {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.kind.is_none() {
                // The first token is short; look at its end only once.
                let end = bytes.iter().position(|b| matches!(b, b' ' | b':' | b'\n'));
                self.kind = end.map(|i| bytes[i] == b' ');
            }
            match bytes.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    self.current += i;
                    self.finish_line();
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.current += bytes.len();
                    bytes = &[];
                }
            }
        }
    }

    fn finish_line(&mut self) {
        let len = self.current;
        let line = if self.kind == Some(true) {
            LongLine::RequestLine(len)
        } else {
            LongLine::Header(len)
        };
        let longer = match self.longest {
            Some(LongLine::RequestLine(l) | LongLine::Header(l)) => len > l,
            None => true,
        };
        if longer {
            self.longest = Some(line);
        }
        self.current = 0;
        self.kind = None;
    }

    /// The longest line read since the last `reset`, the unfinished one too.
    pub fn longest(&self) -> Option<LongLine> {
        let mut copy = *self;
        if copy.current > 0 {
            copy.finish_line();
        }
        copy.longest
    }

    pub fn reset(&mut self) {
        self.longest = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BARE_400: &[u8] = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\ndate: Tue, 01 Dec 2026 10:00:00 GMT\r\n\r\n";

    fn body_of(response: &[u8]) -> serde_json::Value {
        let text = std::str::from_utf8(response).expect("utf-8");
        let (_, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        serde_json::from_str(body).expect("a JSON body")
    }

    #[test]
    fn a_bare_parser_400_becomes_problem_json_and_keeps_its_connection_header() {
        let Rewrite {
            consumed,
            bytes: out,
            ..
        } = rewrite(BARE_400, None, 8192).expect("rewritten");
        assert_eq!(consumed, BARE_400.len());
        let text = String::from_utf8(out.clone()).expect("utf-8");
        assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
        assert!(text.contains("content-type: application/problem+json\r\n"));
        assert!(text.contains("connection: close\r\n"));
        assert!(text.contains("date: Tue, 01 Dec 2026"));
        let body = body_of(&out);
        assert_eq!(body["type"], "https://hookd.dev/problems/bad-request");
        let length = format!("content-length: {}\r\n", body.to_string().len());
        assert!(
            text.contains(&length),
            "framing must match the body: {text}"
        );
    }

    #[test]
    fn a_too_long_request_line_is_414_and_a_too_long_header_431() {
        let Rewrite { bytes: out, .. } =
            rewrite(BARE_400, Some(LongLine::RequestLine(100_000)), 8192).expect("414");
        assert!(out.starts_with(b"HTTP/1.1 414 URI Too Long\r\n"));
        assert_eq!(body_of(&out)["status"], 414);
        let Rewrite { bytes: out, .. } =
            rewrite(BARE_400, Some(LongLine::Header(100_000)), 8192).expect("431");
        assert!(out.starts_with(b"HTTP/1.1 431 "));
        let Rewrite { bytes: out, .. } =
            rewrite(BARE_400, Some(LongLine::RequestLine(20)), 8192).expect("400");
        assert!(
            out.starts_with(b"HTTP/1.1 400 "),
            "a short line is no reason"
        );
    }

    #[test]
    fn the_parsers_431_and_408_get_their_own_problems() {
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";
        let Rewrite { bytes: out, .. } = rewrite(bare, None, 8192).expect("rewritten");
        assert_eq!(
            body_of(&out)["type"],
            "https://hookd.dev/problems/headers-too-large"
        );
        let bare =
            b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        let Rewrite { bytes: out, .. } = rewrite(bare, None, 8192).expect("rewritten");
        assert_eq!(
            body_of(&out)["type"],
            "https://hookd.dev/problems/request-timeout"
        );
    }

    #[test]
    fn responses_of_routes_are_left_alone() {
        let problem = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\ncontent-type: application/problem+json\r\n\r\n{}";
        assert_eq!(rewrite(problem, None, 8192), None, "already a problem");
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(rewrite(ok, None, 8192), None, "not an error");
        let no_content = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(rewrite(no_content, None, 8192), None);
        assert_eq!(
            rewrite(b"HTTP/1.1 400 Bad", None, 8192),
            None,
            "no whole head"
        );
    }

    #[test]
    fn a_refusal_is_a_closed_503_problem() {
        let out = refused(true);
        let text = String::from_utf8(out.clone()).expect("utf-8");
        assert!(text.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
        assert!(text.contains("connection: close\r\n") && text.contains("retry-after: 1\r\n"));
        assert_eq!(
            body_of(&out)["type"],
            "https://hookd.dev/problems/too-many-connections"
        );
    }

    #[test]
    fn the_line_watch_finds_the_longest_line_and_its_kind() {
        let mut watch = LineWatch::default();
        watch.feed(b"GET /");
        watch.feed(&[b'a'; 300]);
        watch.feed(b" HTTP/1.1\r\nHost: x\r\n");
        assert!(matches!(watch.longest(), Some(LongLine::RequestLine(n)) if n > 300));
        watch.reset();
        watch.feed(b"X-Big: ");
        watch.feed(&[b'b'; 500]);
        assert!(
            matches!(watch.longest(), Some(LongLine::Header(n)) if n > 500),
            "an unfinished line counts"
        );
    }
}
