//! The receiver conformance check against small actix-web receivers that
//! verify with `hookd::signing::verify` and keep an inbox (`suite`): a
//! correct one passes every case; one that accepts bad signatures fails
//! exactly the signature, timestamp and tamper cases; a slow one passes
//! with a warning or fails the valid case. Through the API (`api`) the
//! result is stored, listed, limited to once a minute and hidden from
//! other partners; the command line (`command_line`) prints the JSON and
//! exits 0, 1 or 2.

mod api;
mod command_line;
mod suite;

use std::{
    collections::HashSet,
    net::SocketAddr,
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use hookd::{
    secret::Secret,
    signing::{DEFAULT_TOLERANCE_SECS, verify},
};

/// How a test receiver behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Verifies, stores the id once, answers 2xx.
    Correct,
    /// Answers 2xx without verifying anything.
    AcceptsBadSignatures,
    /// Correct, but the first request waits this long before it is answered.
    SlowFirst(Duration),
}

/// A receiver's state: the ids it stored and the events its business
/// handler applied (a check event must never reach it).
pub struct Inbox {
    /// Set once the endpoint (and so its secret) exists.
    secret: Mutex<Secret>,
    behaviour: Behaviour,
    requests: AtomicUsize,
    stored: Mutex<HashSet<String>>,
    applied: Mutex<Vec<String>>,
}

impl Inbox {
    /// How many requests it got.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// How many distinct webhook ids it stored.
    pub fn stored(&self) -> usize {
        self.stored.lock().unwrap().len()
    }

    /// Whether its business handler never ran.
    pub fn applied_nothing(&self) -> bool {
        self.applied.lock().unwrap().is_empty()
    }
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> &'a str {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

async fn receive(req: HttpRequest, body: web::Bytes, inbox: web::Data<Inbox>) -> HttpResponse {
    let first = inbox.requests.fetch_add(1, Ordering::SeqCst) == 0;
    if let (Behaviour::SlowFirst(d), true) = (inbox.behaviour, first) {
        // The receiver under test is slow on purpose: this is its answer
        // time, not a wait for something.
        actix_rt::time::sleep(d).await;
    }
    let id = header(&req, "webhook-id").to_string();
    if inbox.behaviour != Behaviour::AcceptsBadSignatures {
        let secret = inbox.secret.lock().unwrap().clone();
        let verified = verify(
            &secret,
            &id,
            header(&req, "webhook-timestamp"),
            header(&req, "webhook-signature"),
            &body,
            chrono::Utc::now().timestamp(),
            DEFAULT_TOLERANCE_SECS,
        );
        if let Err(e) = verified {
            return HttpResponse::Unauthorized().body(e.to_string());
        }
    }
    let fresh = inbox.stored.lock().unwrap().insert(id.clone());
    if fresh && header(&req, "webhook-check") != "conformance" {
        inbox.applied.lock().unwrap().push(id);
    }
    HttpResponse::NoContent().finish()
}

/// Starts a receiver at `http://<addr>/hooks`.
pub fn receiver(secret: &Secret, behaviour: Behaviour) -> (SocketAddr, web::Data<Inbox>) {
    let inbox = web::Data::new(Inbox {
        secret: Mutex::new(secret.clone()),
        behaviour,
        requests: AtomicUsize::new(0),
        stored: Mutex::new(HashSet::new()),
        applied: Mutex::new(Vec::new()),
    });
    let data = inbox.clone();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(web::PayloadConfig::new(1024 * 1024))
            .route("/hooks", web::post().to(receive))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .expect("the receiver binds");
    let addr = server.addrs()[0];
    actix_rt::spawn(server.run());
    (addr, inbox)
}

/// A receiver at `/hooks` for an endpoint of the test partner, verifying
/// with the endpoint's secret: (endpoint id, its inbox).
pub async fn endpoint_with_receiver(
    app: &crate::harness::TestApp,
    behaviour: Behaviour,
) -> (String, web::Data<Inbox>) {
    let (addr, inbox) = receiver(&Secret::generate(), behaviour);
    let (id, secret) = app.endpoint(&format!("http://{addr}/hooks")).await;
    *inbox.secret.lock().unwrap() = secret;
    (id, inbox)
}
