//! The `hookd` binary: configuration, telemetry, then the command.

use clap::Parser as _;
use tracing_subscriber::{EnvFilter, layer::SubscriberExt as _, util::SubscriberInitExt as _};

fn main() -> std::process::ExitCode {
    // Torn down where a task still holding a database connection can hand it
    // back, so no exit ends in an abort.
    hookd::runtime::run(Box::pin(command()))
}

async fn command() -> std::process::ExitCode {
    let cli = hookd::cli::Cli::parse();
    let config = match hookd::config::Config::load(cli.config.as_deref(), std::env::vars()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(log_filter(&config.log.filter)));
    let lines = tracing_subscriber::fmt::layer()
        // Colours only for a terminal: a redirected log stays plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    // The HTTP parser's ERROR line for each malformed request is held back:
    // the door logs those itself, as a sampled WARN.
    let subscriber = tracing_subscriber::registry()
        .with(filter)
        .with(hookd::http::door::noise::ParserNoise);
    if config.log.json {
        subscriber.with(lines.json()).init();
    } else {
        subscriber.with(lines).init();
    }
    match hookd::cli::run(cli, config).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", cause_chain(&e));
            e.downcast_ref::<hookd::cli::Exit>()
                .map_or(std::process::ExitCode::FAILURE, |x| x.code().into())
        }
    }
}

/// `log.filter`, with the migrator's step-by-step lines (and PostgreSQL's
/// notices about its `IF NOT EXISTS`, "relation … already exists, skipping")
/// held back unless the filter asks for them: hookd says in one line what a
/// migration did.
fn log_filter(configured: &str) -> String {
    let mut filter = configured.to_string();
    for chatty in ["sea_orm_migration", "sqlx::postgres::notice"] {
        if !configured.contains(chatty) {
            filter.push_str(&format!(",{chatty}=warn"));
        }
    }
    filter
}

/// The error and its causes, each said once (many causes repeat their source).
fn cause_chain(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
