//! `hookd demo`: hookd end to end on this machine in one command. It runs
//! hookd on a throwaway SQLite database with a local receiver that verifies
//! every signature, creates a partner, keys and an endpoint, publishes sample
//! events through `POST /v1/events`, and prints each delivery as it arrives
//! (the receiver refuses the first try once, to show a retry). Then it keeps
//! running for the API and the dashboard, or exits (`--exit-when-delivered`).

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use anyhow::Context as _;
use serde_json::json;

use crate::{
    app,
    config::Config,
    domain::clock::{Clock as _, SystemClock},
    secret::{Secret, generate_passphrase},
    store::{
        self,
        endpoints::{EndpointStatus, NewEndpoint},
        keys::Role,
    },
};

/// What `hookd demo` publishes: the bundled catalog's own examples of its
/// business types (hookd's own, `OWN_TYPES`, aside), each
/// at its latest version, so the demo is valid by construction.
fn samples(partner: &str, n: usize) -> Vec<serde_json::Value> {
    let catalog = crate::catalog::Catalog::bundled();
    let kinds: Vec<(String, u32, serde_json::Value)> = catalog
        .types()
        .filter(|t| !crate::catalog::OWN_TYPES.contains(&t.name.as_str()))
        .map(|t| {
            (
                t.name.clone(),
                t.latest().version,
                t.latest().example.clone(),
            )
        })
        .collect();
    (0..n)
        .map(|i| {
            let (event_type, version, data) = &kinds[i % kinds.len()];
            json!({"type": event_type, "partner_id": partner, "data": data, "schema_version": version,
                   "subject": {"type": "customer", "id": "cus_204", "version": i + 1}})
        })
        .collect()
}

/// The demo's receiver: verifies signatures, answers 503 to the very first
/// request (to show a retry), then 2xx, and remembers what it accepted.
#[derive(Default)]
struct Receiver {
    secret: OnceLock<Secret>,
    tries: Mutex<HashMap<String, u32>>,
    accepted: Mutex<HashSet<String>>,
    changed: tokio::sync::Notify,
}

async fn receive(req: HttpRequest, body: web::Bytes, rx: web::Data<Receiver>) -> HttpResponse {
    let header = |name| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let (id, timestamp, signature) = (
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
    );
    let Some(secret) = rx.secret.get() else {
        return HttpResponse::ServiceUnavailable().finish();
    };
    let now = SystemClock.now_ms() / 1000;
    if let Err(e) = crate::signing::verify(secret, id, timestamp, signature, &body, now, 300) {
        println!("  ✗ {id}: signature refused ({e})");
        return HttpResponse::BadRequest().finish();
    }
    let event_type = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["type"].as_str().map(str::to_string))
        .unwrap_or_default();
    let attempt = {
        let mut tries = rx.tries.lock().unwrap_or_else(|e| e.into_inner());
        let first_ever = tries.is_empty();
        let n = tries.entry(id.to_string()).or_default();
        *n += 1;
        if first_ever {
            println!(
                "  ↻ {id} {event_type}: signature verified; answering 503 once to show a retry"
            );
            return HttpResponse::ServiceUnavailable().finish();
        }
        *n
    };
    let fresh = rx
        .accepted
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id.to_string());
    if fresh {
        println!("  ✓ {id} {event_type}: signature verified, accepted on attempt {attempt}");
    }
    rx.changed.notify_waiters();
    HttpResponse::NoContent().finish()
}

/// Runs the demo; with `exit_when_delivered`, stops once every event is in.
pub async fn run(
    mut config: Config,
    events: usize,
    exit_when_delivered: bool,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        (1..=100).contains(&events),
        "--events must be between 1 and 100"
    );
    // A fresh, unguessable directory: `create_dir` fails rather than reuse
    // one someone else made.
    let dir = std::env::temp_dir().join(format!("hookd-demo-{}", ulid::Ulid::new()));
    std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let result = demo(&mut config, &dir, events, exit_when_delivered).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn demo(
    config: &mut Config,
    dir: &std::path::Path,
    events: usize,
    exit_when_delivered: bool,
) -> anyhow::Result<()> {
    // A throwaway database and key, and dev mode's egress rules, so hookd
    // reaches the local receiver (plain http on loopback).
    config.database.url = format!("sqlite://{}/demo.db?mode=rwc", dir.display());
    config.master_key = Some(generate_passphrase());
    crate::cli::dev::allow_local(&mut config.egress);
    // hookd's port first: taken, it stops the demo before anything starts.
    let listener = app::bind(config).map_err(crate::cli::exit::Exit::startup)?;
    tracing::warn!("{}", crate::cli::dev::WARNING);

    let receiver = web::Data::new(Receiver::default());
    let rx = receiver.clone();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(rx.clone())
            .route("/webhooks", web::post().to(receive))
    })
    .workers(1)
    .disable_signals()
    .bind("127.0.0.1:0")
    .context("cannot start the demo receiver")
    .map_err(crate::cli::exit::Exit::startup)?;
    let receiver_addr = server.addrs()[0];
    let receiver_server = server.run();
    let receiver_handle = receiver_server.handle();
    actix_rt::spawn(receiver_server);

    let started = app::start_on(
        listener,
        config.clone(),
        Arc::new(SystemClock),
        !exit_when_delivered,
    )
    .await;
    let running = match started {
        Ok(running) => running,
        Err(e) => {
            receiver_handle.stop(true).await;
            return Err(crate::cli::exit::Exit::startup(e));
        }
    };
    let db = &running.shared.db;
    let now = SystemClock.now_ms();
    let partner = store::partners::create(db, None, "Demo Partner", now).await?;
    let service = store::keys::create(db, Role::Service, None, now).await?;
    let partner_key = store::keys::create(db, Role::Partner, Some(&partner.id), now).await?;
    let operator = store::keys::create(db, Role::Operator, None, now).await?;
    running.known_keys.changed().await;
    let (endpoint, secret) = store::endpoints::create(
        db,
        &running.shared.secrets,
        NewEndpoint {
            partner_id: partner.id.clone(),
            url: format!("http://{receiver_addr}/webhooks"),
            description: "the demo receiver".into(),
            event_types: Vec::new(),
            concurrency: 8,
            rate_limit: None,
            ordering: Default::default(),
            on_dead: Default::default(),
            filter: None,
            schema_version: None,
            schema_versions: Default::default(),
            status: EndpointStatus::Active,
        },
        crate::signing::Scheme::V1,
        now,
    )
    .await?;
    if let crate::signing::SigningKey::Hmac(secret) = secret {
        let _ = receiver.secret.set(secret);
    }
    let base = format!("http://{}", running.addr);
    println!("hookd demo: hookd on {base}, a receiver on http://{receiver_addr}/webhooks");
    println!("  partner {}  endpoint {}", partner.id, endpoint.id);
    println!("publishing {events} events through POST /v1/events …");

    #[allow(
        clippy::disallowed_methods,
        reason = "the demo is hookd's own producer: it calls hookd's API, not a partner"
    )]
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(10))
        .finish();
    let mut res = client
        .post(format!("{base}/v1/events"))
        .bearer_auth(&service.key)
        .send_json(&samples(&partner.id, events))
        .await
        .map_err(|e| anyhow::anyhow!("POST /v1/events: {e}"))?;
    anyhow::ensure!(
        res.status() == 201,
        "POST /v1/events answered {}: {:?}",
        res.status(),
        res.body().await
    );

    let all_in = async {
        loop {
            let wait = receiver.changed.notified();
            if receiver
                .accepted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .len()
                >= events
            {
                return;
            }
            wait.await;
        }
    };
    if exit_when_delivered {
        // The one refused request is retried after the schedule's 5 s.
        actix_rt::time::timeout(Duration::from_secs(60), all_in)
            .await
            .context("not every event arrived within 60 s")?;
        println!("all {events} events delivered and verified");
        running.server.stop(true).await;
        running.wait().await?;
    } else {
        let (op, pk, sk) = (operator.key, partner_key.key, service.key);
        let sample = serde_json::to_string(&samples(&partner.id, 1)[0])?;
        let stopped = running.wait();
        tokio::pin!(stopped);
        tokio::select! {
            // Ctrl-C before every event is in (say, an egress rule blocks
            // the receiver) still stops the demo and cleans up.
            result = &mut stopped => {
                receiver_handle.stop(true).await;
                return result;
            }
            () = all_in => {}
        }
        println!(
            "\nall {events} events delivered and verified. hookd keeps running; try:\n  \
             dashboard      {base}/dashboard   (operator key {op})\n  \
             publish        curl -H 'Authorization: Bearer {sk}' -H 'content-type: application/json' \\\n                   \
             -d '{sample}' {base}/v1/events\n  \
             deliveries     curl -H 'Authorization: Bearer {pk}' {base}/v1/deliveries\n  \
             event feed     curl -H 'Authorization: Bearer {pk}' {base}/v1/events\n  \
             metrics        curl -H 'Authorization: Bearer {op}' {base}/metrics\n\
             Ctrl-C stops it and deletes the demo database.",
        );
        stopped.await?;
    }
    receiver_handle.stop(true).await;
    Ok(())
}
