//! A webhook receiver for hookd: verify, store durably, answer, then apply.
//!
//! ```sh
//! WEBHOOK_SECRETS=whsec_… INBOX_DB=inbox.db PORT=8000 cargo run --release -p hookd-example-receiver
//! ```
//!
//! `POST /webhooks` ([`webhook`]) verifies each event and commits it to a
//! SQLite inbox before it answers; a background task ([`inbox`]) applies the
//! inbox in arrival order through the business handlers ([`handlers`]).
//! `GET /healthz` answers 200. See README.md.

mod handlers;
mod inbox;
mod webhook;

use std::{io::IsTerminal as _, sync::Arc};

use actix_web::{App, HttpServer, web};
use anyhow::Context as _;
use chrono::{DateTime, Utc};
use hookd::secret::Secret;
use tokio::sync::Notify;
use tracing_subscriber::EnvFilter;

use crate::inbox::Inbox;

/// hookd caps `data` at 256 KiB and the envelope adds little; anything larger
/// is refused (413) before it is read. actix-web's own default is 256 KiB,
/// too small for the largest event.
const MAX_BODY: usize = 1024 * 1024;

/// What the environment configures.
struct Config {
    host: String,
    port: u16,
    /// One secret, or during a rotation the old and the new one: an event
    /// signed with either verifies.
    secrets: Vec<Secret>,
    inbox_db: String,
}

impl Config {
    fn from_env() -> anyhow::Result<Config> {
        let var =
            |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
        let secrets = var("WEBHOOK_SECRETS", "")
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
            .map(Secret::parse)
            .collect::<Result<Vec<_>, _>>()
            .context("WEBHOOK_SECRETS: each secret is the endpoint's whsec_… string")?;
        anyhow::ensure!(
            !secrets.is_empty(),
            "set WEBHOOK_SECRETS to the endpoint's whsec_ secret (during a rotation: both, space-separated)"
        );
        Ok(Config {
            host: var("HOST", "127.0.0.1"),
            port: var("PORT", "8000").parse().context("PORT: a port number")?,
            secrets,
            inbox_db: var("INBOX_DB", "inbox.db"),
        })
    }
}

/// The wall clock, for the signature's timestamp window and the inbox's
/// bookkeeping.
#[allow(
    clippy::disallowed_methods,
    reason = "hookd's clippy.toml keeps its own code on an injected clock; a receiver has only this one"
)]
fn now() -> DateTime<Utc> {
    Utc::now()
}

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let config = Config::from_env()?;
    let inbox = Inbox::open(&config.inbox_db)
        .await
        .with_context(|| format!("opening the inbox {}", config.inbox_db))?;

    // Woken by each new event; it also drains what a crash left pending.
    let wake = Arc::new(Notify::new());
    actix_web::rt::spawn(inbox::apply_pending(inbox.clone(), wake.clone()));

    let receiver = web::Data::new(webhook::Receiver {
        secrets: config.secrets,
        // The schemas hookd publishes at `GET /v1/event-types`, compiled in.
        catalog: hookd::catalog::Catalog::bundled(),
        inbox,
        wake,
    });
    tracing::info!(
        "receiving on http://{}:{}/webhooks, inbox {}",
        config.host,
        config.port,
        config.inbox_db
    );
    // On SIGTERM or Ctrl-C the server stops accepting and finishes the
    // requests in flight; what is stored and not yet applied stays pending
    // in the inbox and is applied at the next start.
    HttpServer::new(move || {
        App::new()
            .app_data(receiver.clone())
            .app_data(web::PayloadConfig::new(MAX_BODY))
            .route("/webhooks", web::post().to(webhook::receive))
            .route("/healthz", web::get().to(|| async { "ok" }))
    })
    .bind((config.host.as_str(), config.port))
    .with_context(|| format!("listening on {}:{}", config.host, config.port))?
    .run()
    .await?;
    Ok(())
}
