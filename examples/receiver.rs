//! A webhook receiver that verifies Standard Webhooks signatures with
//! `hookd::signing::verify`, answers 2xx only after it has the event, and
//! drops events it has already seen (deliveries are at least once).
//!
//! ```sh
//! WEBHOOK_SECRET=whsec_… cargo run --example receiver -- 127.0.0.1:9000
//! ```

#![allow(
    clippy::disallowed_methods,
    reason = "an example runs outside hookd: its own HTTP client and wall clock"
)]

use std::{collections::HashSet, sync::Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

struct State {
    secret: hookd::secret::Secret,
    seen: Mutex<HashSet<String>>,
}

async fn receive(req: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let id = header("webhook-id");
    let now = chrono::Utc::now().timestamp();
    let verified = hookd::signing::verify(
        &state.secret,
        id,
        header("webhook-timestamp"),
        header("webhook-signature"),
        &body,
        now,
        hookd::signing::DEFAULT_TOLERANCE_SECS,
    );
    if let Err(e) = verified {
        eprintln!("rejected {id}: {e}");
        return HttpResponse::BadRequest().body(format!("{e}"));
    }
    let first_time = state
        .seen
        .lock()
        .map(|mut s| s.insert(id.to_string()))
        .unwrap_or(true);
    if first_time {
        println!("{}", String::from_utf8_lossy(&body));
    } else {
        println!("duplicate {id} ignored");
    }
    HttpResponse::NoContent().finish()
}

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    let listen = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9000".into());
    let secret = std::env::var("WEBHOOK_SECRET")
        .map_err(|_| anyhow::anyhow!("set WEBHOOK_SECRET to the endpoint's whsec_ secret"))?;
    let state = web::Data::new(State {
        secret: hookd::secret::Secret::parse(&secret)?,
        seen: Mutex::default(),
    });
    println!("receiving on http://{listen}/");
    HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .default_service(web::post().to(receive))
    })
    .bind(&listen)?
    .run()
    .await?;
    Ok(())
}
