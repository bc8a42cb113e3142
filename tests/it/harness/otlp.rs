//! A real OTLP/HTTP trace collector for tests: a std `TcpListener` on a
//! random loopback port that accepts `POST /v1/traces`, decodes each
//! protobuf `ExportTraceServiceRequest` with `opentelemetry-proto`, keeps
//! its spans and answers 200. Stopped when dropped.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpListener, TcpStream},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::Duration,
};

use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest,
    common::v1::any_value::Value as AnyValue,
    trace::v1::{Span, span::SpanKind},
};
use prost::Message as _;

use super::lock_through_poison;

/// One exported span, read for assertions.
#[derive(Clone, Debug)]
pub struct Collected {
    pub name: String,
    pub kind: SpanKind,
    /// Lowercase hex, as in a `traceparent`.
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    /// `service.name` of the resource that sent it.
    pub service: String,
    pub span: Span,
}

impl Collected {
    /// The attribute `key` as text (numbers and booleans written out).
    pub fn attr(&self, key: &str) -> Option<String> {
        let value = self.span.attributes.iter().find(|kv| kv.key == key)?;
        Some(match value.value.as_ref()?.value.as_ref()? {
            AnyValue::StringValue(s) => s.clone(),
            AnyValue::IntValue(i) => i.to_string(),
            AnyValue::BoolValue(b) => b.to_string(),
            AnyValue::DoubleValue(d) => d.to_string(),
            other => format!("{other:?}"),
        })
    }

    pub fn is_error(&self) -> bool {
        self.span.status.as_ref().is_some_and(|s| s.code == 2)
    }
}

pub struct Collector {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<Collected>>>,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Collector {
    pub fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the collector");
        let addr = listener.local_addr().expect("the collector's address");
        let spans = Arc::new(Mutex::new(Vec::new()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, r, halt) = (spans.clone(), requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if halt.load(Ordering::Acquire) {
                    return;
                }
                if let Ok(conn) = conn {
                    serve(conn, &s, &r);
                }
            }
        });
        Collector {
            addr,
            spans,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    /// The base URL, as `telemetry.endpoint` takes it.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn spans(&self) -> Vec<Collected> {
        lock_through_poison(&self.spans).clone()
    }

    /// Each request's `METHOD path content-type`, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        lock_through_poison(&self.requests).clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the accept loop so it sees the stop.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request, keeps its spans, answers it and closes.
fn serve(conn: TcpStream, spans: &Mutex<Vec<Collected>>, requests: &Mutex<Vec<String>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let (mut length, mut content_type) = (0usize, String::new());
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "content-type" => content_type = value.trim().to_string(),
                _ => {}
            }
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let target: Vec<&str> = line.split_whitespace().take(2).collect();
    lock_through_poison(requests).push(format!("{} {content_type}", target.join(" ")));
    let answer = match ExportTraceServiceRequest::decode(body.as_slice()) {
        Ok(request) => {
            lock_through_poison(spans).extend(collected(request));
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
        }
        Err(_) => "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
    };
    let _ = reader.get_mut().write_all(answer.as_bytes());
}

fn collected(request: ExportTraceServiceRequest) -> Vec<Collected> {
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut out = Vec::new();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                AnyValue::StringValue(s) => Some(s.clone()),
                _ => None,
            })
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                out.push(Collected {
                    name: span.name.clone(),
                    kind: SpanKind::try_from(span.kind).unwrap_or(SpanKind::Unspecified),
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    service: service.clone(),
                    span,
                });
            }
        }
    }
    out
}
