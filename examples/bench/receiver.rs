//! The receiver: actix-web on a thread of its own. Endpoint `i` is the path
//! `/e/<i>` on one of its ports; it records the first receipt of each event id
//! per endpoint and answers 200 at once, except a stalled endpoint, which
//! holds every request unanswered, and a flapping one, which answers 500
//! while `failing` is set.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{HttpRequest, HttpResponse, web};
use anyhow::Context as _;

/// What one endpoint received.
#[derive(Default, Clone)]
struct Seen {
    /// Event id → when its first delivery had been read.
    first: HashMap<String, Instant>,
    duplicates: usize,
}

#[derive(Default)]
pub struct Log {
    seen: Mutex<Vec<Seen>>,
    distinct: AtomicUsize,
    pub connections: AtomicUsize,
    /// Requests the stalled endpoint held.
    pub held: AtomicUsize,
    stalled: Option<usize>,
    hold: Duration,
    /// This endpoint answers 500 while `failing` is set (`usize::MAX`: none).
    pub flapping: AtomicUsize,
    pub failing: AtomicBool,
    /// Requests the flapping endpoint answered with 500.
    pub refused: AtomicUsize,
}

pub struct Receiver {
    /// Endpoint `i`'s URL at `urls[i]`.
    pub urls: Vec<String>,
    pub log: Arc<Log>,
    pub server: actix_web::dev::ServerHandle,
}

/// Which endpoints to serve and how.
pub struct Plan {
    pub endpoints: usize,
    /// Listening ports; endpoint `i` is on port `i % ports`.
    pub ports: usize,
    /// This endpoint never answers within `hold`.
    pub stalled: Option<usize>,
    pub hold: Duration,
}

impl Plan {
    /// Healthy endpoints, one port each (the in-process scenarios).
    pub fn port_each(endpoints: usize) -> Plan {
        Plan {
            endpoints,
            ports: endpoints,
            stalled: None,
            hold: Duration::ZERO,
        }
    }
}

#[derive(Default)]
pub struct Report {
    /// First receipts of events that were sent.
    pub received: usize,
    pub duplicates: usize,
    /// Expected deliveries that did not arrive.
    pub lost: usize,
    /// Ingest → first receipt, sorted.
    pub latencies: Vec<Duration>,
    /// Every first receipt, sorted.
    pub receipts: Vec<Instant>,
    pub problems: Vec<String>,
}

async fn receive(req: HttpRequest, _body: web::Bytes, log: web::Data<Log>) -> HttpResponse {
    let at = Instant::now();
    let endpoint = req
        .path()
        .strip_prefix("/e/")
        .and_then(|i| i.parse::<usize>().ok());
    let Some(endpoint) = endpoint.filter(|i| *i < log.seen.lock().expect("the log").len()) else {
        return HttpResponse::NotFound().finish();
    };
    if log.stalled == Some(endpoint) {
        log.held.fetch_add(1, Relaxed);
        actix_rt::time::sleep(log.hold).await;
        return HttpResponse::Ok().finish();
    }
    if log.failing.load(Relaxed) && log.flapping.load(Relaxed) == endpoint {
        log.refused.fetch_add(1, Relaxed);
        return HttpResponse::InternalServerError().finish();
    }
    let id = req
        .headers()
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let seen = &mut log.seen.lock().expect("the receiver log")[endpoint];
    if seen.first.contains_key(id) {
        seen.duplicates += 1;
    } else {
        seen.first.insert(id.into(), at);
        log.distinct.fetch_add(1, Relaxed);
    }
    HttpResponse::Ok().finish()
}

impl Receiver {
    pub fn start(plan: Plan) -> anyhow::Result<Receiver> {
        let listeners: Vec<_> = (0..plan.ports.max(1))
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
            .collect::<Result<_, _>>()?;
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<Result<_, _>>()?;
        let urls = (0..plan.endpoints)
            .map(|i| format!("http://127.0.0.1:{}/e/{i}", ports[i % ports.len()]))
            .collect();
        let log = Arc::new(Log {
            seen: Mutex::new(vec![Seen::default(); plan.endpoints]),
            stalled: plan.stalled,
            hold: plan.hold,
            flapping: AtomicUsize::new(usize::MAX),
            ..Log::default()
        });
        let (shared, (tx, rx)) = (web::Data::from(log.clone()), std::sync::mpsc::channel());
        let serve = move || {
            actix_rt::System::new().block_on(async move {
                let counter = shared.clone();
                let app = move || {
                    actix_web::App::new()
                        .app_data(shared.clone())
                        .default_service(web::to(receive))
                };
                let mut server = actix_web::HttpServer::new(app)
                    .workers(1)
                    .max_connections(100_000)
                    .disable_signals()
                    .on_connect(move |_, _| {
                        counter.connections.fetch_add(1, Relaxed);
                    });
                for listener in listeners {
                    server = server.listen(listener)?;
                }
                let server = server.run();
                let _ = tx.send(server.handle());
                server.await
            })
        };
        std::thread::Builder::new()
            .name("bench-receiver".into())
            .spawn(serve)?;
        let server = rx.recv().context("the receiver did not start")?;
        Ok(Receiver { urls, log, server })
    }

    /// Endpoint `endpoint`'s first receipt of each event id.
    pub fn first_receipts(&self, endpoint: usize) -> HashMap<String, Instant> {
        let seen = self.log.seen.lock().expect("the receiver log");
        seen[endpoint].first.clone()
    }

    /// Distinct deliveries so far.
    pub fn distinct(&self) -> usize {
        self.log.distinct.load(Relaxed)
    }

    /// Waits until `expected` distinct deliveries arrived, or none came for `stall`.
    pub async fn wait_for(&self, expected: usize, stall: Duration) {
        let (mut last, mut since) = (0, Instant::now());
        while self.distinct() < expected && since.elapsed() < stall {
            if self.distinct() != last {
                (last, since) = (self.distinct(), Instant::now());
            }
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Which of the events sent to it (with when each was sent) each of
    /// `endpoints` got, with the latency of each first receipt.
    pub fn report<'a>(
        &self,
        endpoints: impl IntoIterator<Item = usize>,
        sent_to: impl Fn(usize) -> &'a HashMap<String, Instant>,
    ) -> Report {
        let seen = self.log.seen.lock().expect("the receiver log");
        let mut r = Report::default();
        for endpoint in endpoints {
            let (seen, sent) = (&seen[endpoint], sent_to(endpoint));
            let mut known = 0;
            for (id, at) in &seen.first {
                if let Some(send) = sent.get(id) {
                    r.latencies.push(at.saturating_duration_since(*send));
                    r.receipts.push(*at);
                    known += 1;
                }
            }
            r.received += known;
            r.duplicates += seen.duplicates;
            r.lost += sent.len() - known;
            if known != sent.len() || known != seen.first.len() {
                let (of, unknown) = (sent.len(), seen.first.len() - known);
                r.problems.push(format!(
                    "endpoint {endpoint} got {known} of {of} events and {unknown} unknown ids"
                ));
            }
        }
        r.latencies.sort_unstable();
        r.receipts.sort_unstable();
        r
    }
}

impl Report {
    pub fn percentile(&self, p: f64) -> Duration {
        let rank = (self.latencies.len() as f64 * p).ceil() as usize;
        self.latencies
            .get(rank.max(1) - 1)
            .copied()
            .unwrap_or_default()
    }

    pub fn max_latency(&self) -> Duration {
        self.latencies.last().copied().unwrap_or_default()
    }

    pub fn last_receipt(&self) -> Option<Instant> {
        self.receipts.last().copied()
    }

    /// "duplicates 0, lost 0", and whether both are zero.
    pub fn check(&self) -> (String, bool) {
        let ok = self.duplicates == 0 && self.lost == 0 && self.problems.is_empty();
        (
            format!("duplicates {}, lost {}", self.duplicates, self.lost),
            ok,
        )
    }
}
