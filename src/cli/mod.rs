//! The command line: `hookd serve` (the default), `hookd migrate`, `hookd
//! demo`, and the operator's commands, one module per group. They work
//! beside a running `serve` (or without one), with the configuration
//! `serve` uses, through the same checks and store calls as the operator
//! API, so the two cannot disagree; what they change is audited `via: cli`.
//!
//! - [`ctx`]: the database, URL checks, audit entries, change notices;
//!   [`database`]: which database, and the refusal to create one;
//! - [`exit`]: exit statuses (0 done, 1 failed, 2 bad input or start-up,
//!   3 not found); [`out`]: JSON or text; [`input`]: files and stdin;
//!   [`page`]: list paging;
//! - [`serve`]: serve and migrate; [`dev`]: dev mode;
//! - [`partner`] with [`portal_link`], [`key`], [`endpoint`] with
//!   [`endpoint_change`], [`endpoint_view`], [`endpoint_auth`], [`secret`],
//!   [`probe`] and [`filter_test`], [`delivery`] with [`attempts`], [`event`] with
//!   [`publish`], [`audit`], [`catalog`], [`check`]: the command groups.

pub mod attempts;
pub mod audit;
pub mod catalog;
pub mod check;
pub mod ctx;
pub mod database;
pub mod delivery;
pub mod dev;
pub mod endpoint;
pub mod endpoint_auth;
pub mod endpoint_change;
pub mod endpoint_view;
pub mod event;
pub mod event_export;
pub mod exit;
pub mod filter_test;
pub mod incident;
pub mod input;
pub mod key;
pub mod out;
pub mod page;
pub mod partner;
pub mod portal_link;
pub mod probe;
pub mod publish;
pub mod routing_args;
pub mod secret;
pub mod serve;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use exit::Exit;

use crate::config::Config;

/// Where configuration comes from, and what the exit statuses mean.
const AFTER_HELP: &str = "\
Configuration (every command reads the same as `serve`), later sources winning:
  1. the defaults: every key is listed, with its meaning, in config/default.toml
  2. --config FILE: a TOML file with the same sections and keys
  3. HOOKD_<SECTION>__<KEY> environment variables, two underscores between
     section and key: HOOKD_HTTP__LISTEN=0.0.0.0:8080,
     HOOKD_DATABASE__URL=postgres://user@host/db,
     HOOKD_EGRESS__ALLOW_CIDRS='[\"10.20.0.0/16\"]' (lists are TOML arrays)
  Run the operator commands with the same file and variables as `serve`:
  only serve, migrate and demo create a database; the others refuse a
  missing one, naming where they looked.
  docs/configuration.md describes every key.

Exit status: 0 done; 1 failed; 2 bad input, configuration or start-up
(the message names what to fix); 3 no such object.";

#[derive(Debug, Parser)]
#[command(
    name = "hookd",
    version,
    about = "A webhook delivery engine: outbox in, signed and retried webhooks out.",
    after_help = AFTER_HELP
)]
pub struct Cli {
    /// A TOML configuration file read over the defaults (HOOKD_* variables still win).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Dev mode, for a laptop only: callbacks may go to loopback and private
    /// addresses, over plain http, on any port (serve, demo, and the commands
    /// that check a callback URL).
    #[arg(long, global = true)]
    pub dev: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the web API and the delivery engine (the default). With --dev,
    /// also print the dashboard with a fresh operator key, and the commands
    /// to a first verified delivery to a receiver on this machine.
    Serve {
        /// What to run (overrides cluster.role): all; api (the API and the
        /// dashboard, sending nothing to receivers); delivery (fanout and
        /// delivery, answering only /healthz, /readyz and /metrics). Split
        /// roles need PostgreSQL.
        #[arg(long, value_name = "ROLE")]
        role: Option<crate::domain::role::Role>,
    },
    /// Bring the database schema up to date and exit (serve does it too).
    Migrate,
    /// Run hookd on a throwaway database with a local receiver, publish sample
    /// events and show each signed delivery arrive (then keep running, with
    /// keys for the dashboard and the API). Always in dev mode.
    Demo {
        /// How many events to publish (1 to 100).
        #[arg(long, default_value_t = 5)]
        events: usize,
        /// Exit once every event is delivered (instead of running on).
        #[arg(long)]
        exit_when_delivered: bool,
    },
    /// Partners: create, list, show, set where their notices go, and mint
    /// portal sign-in links.
    #[command(subcommand)]
    Partner(partner::PartnerCommand),
    /// API keys: create, list (never the keys) and revoke.
    #[command(subcommand)]
    Key(key::KeyCommand),
    /// Endpoints of every partner: create, list, show, change, enable,
    /// disable, delete; rotate secrets, test, recover, check, try filters;
    /// their held subjects and receiver credentials.
    #[command(subcommand)]
    Endpoint(endpoint::EndpointCommand),
    /// Deliveries of every partner: search, show with attempts, replay,
    /// skip; attempts across deliveries.
    #[command(subcommand)]
    Delivery(delivery::DeliveryCommand),
    /// Events of every partner: list, show one with its deliveries; publish.
    #[command(subcommand)]
    Event(event::EventCommand),
    /// The audit log of operator actions (API, dashboard and CLI).
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Incidents: times when hookd's own delivery to a partner was
    /// impaired. Open one by hand with a message, resolve, list.
    #[command(subcommand)]
    Incident(incident::IncidentCommand),
    /// Check the event catalog (compile every schema, validate every example)
    /// without starting.
    #[command(subcommand)]
    Catalog(catalog::CatalogCommand),
    /// Check a webhook receiver: send it the conformance suite (a valid
    /// event, a duplicate, forged, unsigned, stale and tampered requests, an
    /// unknown type, a large body) and print the scorecard. Exits 0 only when
    /// every case passed, 1 otherwise, 2 on a usage or configuration error.
    ///
    /// It sends under the same egress settings as deliveries: a receiver on
    /// this machine needs --dev; one on a private network needs
    /// egress.allow_cidrs (and egress.allow_http for http://,
    /// egress.allowed_ports for its port), as it would to receive deliveries.
    CheckReceiver(check::CheckReceiver),
}

/// Runs the command line on the current actix System.
pub async fn run(cli: Cli, config: Config) -> anyhow::Result<()> {
    let dev = cli.dev;
    let group = match cli.command.unwrap_or(Command::Serve { role: None }) {
        Command::Serve { role } => {
            let mut config = config;
            if let Some(role) = role {
                config.cluster.role = role;
            }
            return serve::serve(config, dev, cli.config.as_deref()).await;
        }
        Command::Migrate => return serve::migrate(&config).await,
        Command::Demo {
            events,
            exit_when_delivered,
        } => return crate::demo::run(config, events, exit_when_delivered).await,
        Command::Catalog(c) => return catalog::run(&config, c),
        Command::CheckReceiver(c) => return check::run(&config, dev, c).await,
        group => group,
    };
    let ctx = ctx::Ctx::open(config, dev).await?;
    let result = match group {
        Command::Partner(c) => partner::run(&ctx, c).await,
        Command::Key(c) => key::run(&ctx, c).await,
        Command::Endpoint(c) => endpoint::run(&ctx, c).await,
        Command::Delivery(c) => delivery::run(&ctx, c).await,
        Command::Event(c) => event::run(&ctx, c).await,
        Command::Audit(c) => audit::run(&ctx, c).await,
        Command::Incident(c) => incident::run(&ctx, c).await,
        _ => unreachable!("the commands above returned"),
    };
    ctx.close().await;
    result
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    /// Every subcommand, with its path (`endpoint update`).
    fn every_command(c: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in c.get_subcommands() {
            let p = format!("{path} {}", sub.get_name()).trim().to_string();
            out.push((p.clone(), sub.clone()));
            every_command(sub, p, out);
        }
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Every command with its path, `hookd` itself first.
    fn all_commands() -> Vec<(String, clap::Command)> {
        let mut all = vec![("hookd".to_string(), Cli::command())];
        every_command(&Cli::command(), String::new(), &mut all);
        all
    }

    /// Every argument of every command but `--help` and `--version`:
    /// (command path, argument).
    fn all_arguments() -> Vec<(String, clap::Arg)> {
        let mut out = Vec::new();
        for (path, command) in all_commands() {
            for arg in command.get_arguments() {
                if !matches!(arg.get_id().as_str(), "help" | "version") {
                    out.push((path.clone(), arg.clone()));
                }
            }
        }
        out
    }

    #[test]
    fn every_command_says_what_it_does() {
        let all = all_commands();
        assert!(
            all.len() > 10,
            "the walk finds the subcommands: {}",
            all.len()
        );
        for (path, command) in &all {
            assert!(
                command.get_about().is_some() || path == "hookd" || command.get_name() == "help",
                "`{path}` has no help text"
            );
        }
    }

    #[test]
    fn every_flag_and_argument_says_what_it_does() {
        for (path, arg) in all_arguments() {
            let id = arg.get_id().as_str();
            assert!(
                arg.get_help()
                    .is_some_and(|h| !h.to_string().trim().is_empty()),
                "`{path}`: the argument `{id}` has no help text"
            );
        }
    }

    #[test]
    fn no_flag_shows_an_empty_default() {
        for (path, arg) in all_arguments() {
            let id = arg.get_id().as_str();
            assert!(
                !arg.get_default_values().iter().any(|v| v.is_empty()),
                "`{path}`: the argument `{id}` shows an empty default"
            );
        }
    }

    #[test]
    fn the_help_says_where_configuration_comes_from() {
        let help = Cli::command().render_long_help().to_string();
        for wanted in [
            "--config FILE",
            "HOOKD_<SECTION>__<KEY>",
            "two underscores",
            "config/default.toml",
            "docs/configuration.md",
        ] {
            assert!(
                help.contains(wanted),
                "`hookd --help` lacks `{wanted}`:\n{help}"
            );
        }
    }
}
