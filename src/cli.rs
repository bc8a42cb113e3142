//! The command line: `hookd serve` (the default), `hookd migrate`, and operator
//! commands for partners, keys and endpoints that work before the web API.

use std::{path::PathBuf, sync::Arc};

use actix::Actor as _;
use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use serde_json::json;

use crate::{
    app,
    config::Config,
    domain::clock::{Clock as _, SystemClock},
    egress::{
        resolver::ResolverActor,
        url_check::{EgressRules, check_registration},
    },
    keyfile,
    secret::SecretBox,
    store::{
        self,
        endpoints::{EndpointStatus, NewEndpoint},
        keys::Role,
    },
};

#[derive(Debug, Parser)]
#[command(
    name = "hookd",
    version,
    about = "A webhook delivery engine: outbox in, signed and retried webhooks out."
)]
pub struct Cli {
    /// A configuration file read over the defaults (environment variables still win).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the web API and the delivery engine (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Manage partners.
    #[command(subcommand)]
    Partner(PartnerCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Manage endpoints.
    #[command(subcommand)]
    Endpoint(EndpointCommand),
    /// Check the event catalog (compile every schema, validate every example)
    /// without starting.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Check a webhook receiver: send it the conformance suite (a valid
    /// event, a duplicate, forged, unsigned, stale and tampered requests, an
    /// unknown type, a large body) and print the scorecard. Exits 0 only when
    /// every case passed, 1 otherwise, 2 on a usage or configuration error.
    ///
    /// It loads the same configuration as `serve` and sends under the same
    /// egress settings as deliveries: a receiver on loopback or a private
    /// network needs egress.allow_cidrs (and egress.allow_http for http://,
    /// egress.allowed_ports for its port), as it would to receive deliveries.
    CheckReceiver(CheckReceiver),
    /// Run hookd on a throwaway database with a local receiver, publish sample
    /// events and show each signed delivery arrive (then keep running).
    Demo {
        /// How many events to publish (1 to 100).
        #[arg(long, default_value_t = 5)]
        events: usize,
        /// Exit once every event is delivered (instead of running on).
        #[arg(long)]
        exit_when_delivered: bool,
    },
}

#[derive(Debug, Args)]
pub struct CheckReceiver {
    /// The receiver's URL, judged by the egress settings deliveries use (for
    /// loopback or a private network: egress.allow_cidrs, egress.allow_http).
    #[arg(long)]
    url: String,
    /// The signing secret the receiver verifies with, `whsec_` and base64.
    #[arg(long, value_name = "whsec_…")]
    secret: String,
    /// Print the scorecard as one JSON object (`passed`, `cases`,
    /// `checked_at`) instead of a table.
    #[arg(long)]
    json: bool,
}

/// A failure whose exit status says more than 1; `main` maps it.
#[derive(Debug, thiserror::Error)]
pub enum Exit {
    /// A usage or configuration error: exit 2.
    #[error("{0}")]
    Usage(String),
    /// A check ran and some of its cases failed: exit 1 (the scorecard says which).
    #[error("{failed} of {total} cases failed")]
    Failed { failed: usize, total: usize },
}

impl Exit {
    pub fn code(&self) -> u8 {
        match self {
            Exit::Usage(_) => 2,
            Exit::Failed { .. } => 1,
        }
    }
}

/// What a refused `--url` adds: the rules are those of deliveries.
const EGRESS_NOTE: &str = "check-receiver sends under the egress settings deliveries use, from the \
     configuration `serve` loads: a receiver on loopback or a private network needs \
     egress.allow_cidrs (e.g. [\"127.0.0.0/8\"]), egress.allow_http for http:// and \
     egress.allowed_ports for its port (or HOOKD_EGRESS__* variables)";

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Load a catalog directory (default: `catalog.path`, else the bundled
    /// one) as `serve` would, and list its types; exit 1 naming the file and
    /// the JSON pointer of the first problem.
    Check {
        /// A directory of `<type>.json` files.
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PartnerCommand {
    /// Create a partner.
    Create {
        #[arg(long)]
        name: String,
        /// An id of your choosing (default: a new `ptn_` id).
        #[arg(long)]
        id: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create an API key; it is printed this once.
    Create(KeyCreate),
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false, id = "role")]
pub struct KeyRole {
    /// A partner key, scoped to this partner.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    /// A service key, for producing events.
    #[arg(long)]
    service: bool,
    /// An operator key.
    #[arg(long)]
    operator: bool,
}

#[derive(Debug, Args)]
pub struct KeyCreate {
    #[command(flatten)]
    role: KeyRole,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
pub enum EndpointCommand {
    /// Register an endpoint; its signing secret is printed this once.
    Create {
        #[arg(long)]
        partner: String,
        #[arg(long)]
        url: String,
        /// Comma-separated event types (`usage.*` matches a family); default all.
        #[arg(long, value_delimiter = ',')]
        event_types: Vec<String>,
        #[arg(long, default_value = "")]
        description: String,
        /// Requests in flight at most (default: delivery.default_concurrency).
        #[arg(long)]
        concurrency: Option<u32>,
        #[arg(long)]
        json: bool,
    },
}

fn print(json: bool, value: serde_json::Value, text: String) {
    if json {
        println!("{value}");
    } else {
        println!("{text}");
    }
}

/// Runs the command line on the current actix System.
pub async fn run(cli: Cli, config: Config) -> anyhow::Result<()> {
    let clock = SystemClock;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::CheckReceiver(c) => check_receiver(&config, c).await,
        Command::Demo {
            events,
            exit_when_delivered,
        } => crate::demo::run(config, events, exit_when_delivered).await,
        Command::Catalog(CatalogCommand::Check { dir }) => {
            let mut catalog = config.catalog.clone();
            if dir.is_some() {
                catalog.path = dir;
            }
            let shown = catalog
                .path
                .as_ref()
                .map_or("the bundled catalog".to_string(), |p| {
                    p.display().to_string()
                });
            let loaded = catalog.load().map_err(|e| anyhow::anyhow!("{e}"))?;
            for t in loaded.types() {
                let versions: Vec<String> =
                    t.versions.iter().map(|v| v.version.to_string()).collect();
                println!(
                    "{}  versions {}{}",
                    t.name,
                    versions.join(", "),
                    if t.deprecated { "  (deprecated)" } else { "" }
                );
            }
            println!(
                "{shown}: {} event types, every schema compiles and every example is valid",
                loaded.types().count()
            );
            Ok(())
        }
        Command::Migrate => {
            let db = store::connect(&config.database).await?;
            store::migrate(&db).await?;
            println!("migrated {}", store::redact_url(&config.database.url));
            Ok(())
        }
        Command::Partner(PartnerCommand::Create { name, id, json }) => {
            let db = connect(&config).await?;
            let name = crate::domain::partner::name(&name).map_err(|e| anyhow::anyhow!("--{e}"))?;
            if let Some(id) = &id {
                crate::domain::partner::id(id).map_err(|e| anyhow::anyhow!("--{e}"))?;
                anyhow::ensure!(
                    store::partners::find(&db, id).await?.is_none(),
                    "partner {id} already exists"
                );
            }
            let p = store::partners::create(&db, id, name, clock.now_ms()).await?;
            print(
                json,
                json!({"id": p.id, "name": p.name}),
                format!("created partner {} ({})", p.id, p.name),
            );
            Ok(())
        }
        Command::Key(KeyCommand::Create(k)) => {
            let db = connect(&config).await?;
            let (role, partner) = match (k.role.partner, k.role.service, k.role.operator) {
                (Some(p), _, _) => (Role::Partner, Some(p)),
                (None, true, _) => (Role::Service, None),
                _ => (Role::Operator, None),
            };
            if let Some(p) = &partner {
                anyhow::ensure!(
                    store::partners::find(&db, p).await?.is_some(),
                    "partner {p} does not exist"
                );
            }
            let key = store::keys::create(&db, role, partner.as_deref(), clock.now_ms()).await?;
            print(
                k.json,
                json!({"id": key.id, "key": key.key, "role": role.as_str(), "partner_id": partner}),
                format!(
                    "created {} key {}: {}\n(shown this once; only a hash is stored)",
                    role.as_str(),
                    key.id,
                    key.key
                ),
            );
            Ok(())
        }
        Command::Endpoint(EndpointCommand::Create {
            partner,
            url,
            event_types,
            description,
            concurrency,
            json,
        }) => {
            let db = connect(&config).await?;
            anyhow::ensure!(
                store::partners::find(&db, &partner).await?.is_some(),
                "partner {partner} does not exist"
            );
            for t in &event_types {
                let pattern = t
                    .strip_suffix(".*")
                    .map(|p| format!("{p}.x"))
                    .unwrap_or_else(|| t.clone());
                anyhow::ensure!(
                    crate::domain::event::valid_event_type(&pattern),
                    "--event-types: `{t}` is not an event type"
                );
            }
            let concurrency = concurrency.unwrap_or(config.delivery.default_concurrency);
            anyhow::ensure!(
                (1..=256).contains(&concurrency),
                "--concurrency must be between 1 and 256"
            );
            let rules = EgressRules::from_config(&config.egress);
            let resolver = ResolverActor::new(&config.egress, rules.policy.clone())?.start();
            let checked = check_registration(&url, &rules, &resolver)
                .await
                .map_err(|e| anyhow::anyhow!("--url: {e}"))?;
            let secrets = SecretBox::from_passphrase(&keyfile::master_passphrase(&config)?)?;
            let new = NewEndpoint {
                partner_id: partner,
                url: checked.url.to_string(),
                description,
                event_types,
                concurrency,
                rate_limit: None,
                schema_version: None,
                schema_versions: Default::default(),
                status: EndpointStatus::Active,
            };
            let (e, secret) = store::endpoints::create(&db, &secrets, new, clock.now_ms()).await?;
            print(
                json,
                json!({"id": e.id, "partner_id": e.partner_id, "url": e.url, "secret": secret.expose()}),
                format!(
                    "created endpoint {} -> {}\nsigning secret (shown this once): {}",
                    e.id,
                    e.url,
                    secret.expose()
                ),
            );
            Ok(())
        }
    }
}

/// `hookd check-receiver`: the conformance suite against a URL, as the
/// API's check sends it, with a secret given on the command line.
async fn check_receiver(config: &Config, c: CheckReceiver) -> anyhow::Result<()> {
    use crate::{
        conformance::{send, suite},
        delivery::client::{Limits, tls_config},
        domain::ids::{EventId, new_id},
    };
    let secret = crate::secret::Secret::parse(&c.secret)
        .map_err(|e| Exit::Usage(format!("--secret: {e}")))?;
    let rules = EgressRules::from_config(&config.egress);
    let resolver = ResolverActor::new(&config.egress, rules.policy.clone())?.start();
    let url = check_registration(&c.url, &rules, &resolver)
        .await
        .map_err(|e| Exit::Usage(format!("--url: {e}.\n{EGRESS_NOTE}")))?;
    let tls = tls_config(config.egress.extra_ca_file.as_deref())
        .map_err(|e| Exit::Usage(format!("egress.extra_ca_file: {e:#}")))?;
    let script = suite::Script::new(
        suite::Target {
            check_id: new_id("chk"),
            partner_id: "local".into(),
            endpoint_id: None,
        },
        secret,
        EventId::generate,
    );
    let clock = SystemClock;
    let limits = Limits::from_config(&config.delivery);
    let card = send::run(
        &script,
        &url,
        &send::Wire::new(&resolver, tls, &limits, &clock),
    )
    .await;
    if c.json {
        println!("{}", serde_json::to_string(&card)?);
    } else {
        println!("check of {}\n{}", url.url, card.table());
    }
    let failed = card.cases.iter().filter(|c| !c.passed).count();
    if failed > 0 {
        return Err(Exit::Failed {
            failed,
            total: card.cases.len(),
        }
        .into());
    }
    Ok(())
}

async fn connect(config: &Config) -> anyhow::Result<sea_orm::DatabaseConnection> {
    let db = store::connect(&config.database).await?;
    store::migrate(&db)
        .await
        .context("preparing the database")?;
    Ok(db)
}

/// `hookd serve`: runs until SIGINT or SIGTERM, after telling the person at
/// the terminal what to do next.
async fn serve(config: Config) -> anyhow::Result<()> {
    let database = store::redact_url(&config.database.url);
    let running = app::start(config, Arc::new(SystemClock), false).await?;
    tracing::info!(address = %running.addr, %database, "hookd is serving");
    println!(
        "\nhookd is listening on http://{addr} (database {database}).\n\
         Next, in another terminal (from a checkout, `hookd` is `cargo run --release --`):\n  \
         hookd partner create --name Acme --json                 # -> partner id\n  \
         hookd key create --service --json                       # -> service key for POST /v1/events\n  \
         hookd endpoint create --partner <id> --url https://example.com/hooks --json   # -> endpoint secret\n  \
         curl -H 'Authorization: Bearer <service key>' -H 'content-type: application/json' \\\n    \
         -d '{{\"type\":\"usage.finalized\",\"partner_id\":\"<id>\",\"data\":{{\"final_cost\":\"1.20\",\"currency\":\"USD\"}}}}' \\\n    \
         http://{addr}/v1/events\n",
        addr = running.addr
    );
    running.serve_until_stopped().await?;
    tracing::info!("hookd stopped");
    Ok(())
}
