//! What an operator command runs with: the configuration, the database
//! (migrated quietly), the clock, the event catalog, and the three things
//! every action does as the API does it: check a callback URL under the
//! egress settings, write the audit entry (`via: cli`), and tell running
//! instances what changed.

use actix::Actor as _;
use anyhow::Context as _;
use sea_orm::DatabaseConnection;

use super::{database, dev, exit};
use crate::{
    catalog::Catalog,
    config::Config,
    domain::clock::{Clock as _, SystemClock},
    egress::{
        resolver::ResolverActor,
        url_check::{EgressRules, RegistrationError, check_registration, check_url},
    },
    keyfile,
    secret::SecretBox,
    store::{
        self,
        audit::{self, Action, Entry, Via},
    },
};

/// The configuration and an open, migrated database.
pub struct Ctx {
    pub config: Config,
    pub db: DatabaseConnection,
    /// `--dev`: callback URLs are judged by dev mode's egress rules.
    pub dev: bool,
}

impl Ctx {
    /// Opens the database, which must exist (the CLI makes none: see
    /// [`database`]), and brings its schema up to date. A database that is
    /// missing or cannot be reached is a start-up error (exit 2).
    pub async fn open(config: Config, dev: bool) -> anyhow::Result<Ctx> {
        let db = database::connect_existing(&config.database).await?;
        if let Err(e) = store::migrate(&db).await {
            let _ = db.close().await;
            return Err(e).context("preparing the database");
        }
        Ok(Ctx { config, db, dev })
    }

    /// Closes the pool while the runtime still runs (a PostgreSQL pool
    /// dropped after it panics).
    pub async fn close(self) {
        let _ = self.db.close().await;
    }

    pub fn now(&self) -> i64 {
        SystemClock.now_ms()
    }

    /// The key that encrypts endpoint secrets (with SQLite, made once beside
    /// the database).
    pub fn secrets(&self) -> anyhow::Result<SecretBox> {
        let passphrase = keyfile::master_passphrase(&self.config).map_err(exit::Exit::startup)?;
        SecretBox::from_passphrase(&passphrase).map_err(exit::Exit::startup)
    }

    /// The event catalog `serve` loads, which a filter's `data` paths are
    /// checked against; one that does not load is a start-up error (exit 2).
    pub fn catalog(&self) -> anyhow::Result<std::sync::Arc<Catalog>> {
        self.config
            .catalog
            .load()
            .map_err(|e| exit::Exit::startup(anyhow::anyhow!("catalog.path: {e}")))
    }

    /// `url` as the API's registration check judges it: the egress rules,
    /// then the name resolved and every address judged. A refusal is bad
    /// input (exit 2) naming `flag`, and says when `--dev` would allow it.
    pub async fn checked_url(&self, flag: &str, url: &str) -> anyhow::Result<String> {
        let mut egress = self.config.egress.clone();
        if self.dev {
            dev::allow_local(&mut egress);
        }
        let rules = EgressRules::from_config(&egress);
        let resolver = ResolverActor::new(&egress, rules.policy.clone())?.start();
        match check_registration(url, &rules, &resolver).await {
            Ok(u) => Ok(u.url.to_string()),
            Err(RegistrationError::Resolver(e)) => Err(anyhow::anyhow!("the resolver failed: {e}")),
            Err(e) => {
                let remedy = crate::egress::remedy::for_registration(&self.config.egress, url, &e)
                    .map(|r| format!("; {r}"))
                    .unwrap_or_default();
                let hint = if !self.dev && dev_would_allow(&self.config, url, &e) {
                    "\nFor a receiver on this machine or your own network, add --dev \
                     (and run `hookd serve --dev`): for a laptop only."
                } else {
                    ""
                };
                Err(exit::usage(format!("{flag}: {e}{remedy}{hint}")))
            }
        }
    }

    /// Whether only dev mode lets `url` in: a running hookd delivers to it
    /// only in dev mode (or with egress settings that allow it).
    pub fn needs_dev(&self, url: &str) -> bool {
        check_url(url, &EgressRules::from_config(&self.config.egress)).is_err()
    }

    /// Writes the audit entry of an operator action that has just succeeded,
    /// as the admin API does, with `via: cli` and the local user.
    pub async fn audit(
        &self,
        action: Action,
        target: &str,
        partner_id: Option<&str>,
        detail: serde_json::Value,
    ) -> anyhow::Result<()> {
        let entry = Entry {
            at: self.now(),
            key_id: "cli".into(),
            via: Via::Cli,
            action,
            target: target.to_string(),
            partner_id: partner_id.map(str::to_string),
            detail,
            remote_addr: local_user(),
        };
        audit::record(&self.db, &entry).await.with_context(|| {
            format!(
                "{} {target} was done, but its audit entry was not written",
                action.as_str()
            )
        })?;
        Ok(())
    }

    /// Tells running instances that `endpoint_id` changed, so its owner
    /// reloads it at once (PostgreSQL; with SQLite the engine rereads an
    /// endpoint's settings within a minute, and its status and deliveries
    /// at once, from the database).
    pub async fn announce(&self, endpoint_id: &str) {
        if let Err(e) = store::fanout::announce_change(&self.db, "cli", endpoint_id).await {
            tracing::warn!(endpoint = endpoint_id, error = %e,
                "telling running instances of the change failed; they reload the endpoint within a minute");
        }
    }
}

/// Whether dev mode's rules would have taken the URL `error` refused: a
/// scheme, a port or an address that only dev mode allows.
fn dev_would_allow(config: &Config, url: &str, error: &RegistrationError) -> bool {
    use crate::egress::{resolver::ResolveError, url_check::UrlError};
    let mut local = config.egress.clone();
    dev::allow_local(&mut local);
    let rules = EgressRules::from_config(&local);
    match error {
        RegistrationError::Url(
            UrlError::Scheme(_) | UrlError::Port(..) | UrlError::Forbidden(_),
        ) => check_url(url, &rules).is_ok(),
        RegistrationError::Resolve(ResolveError::Blocked { reason, .. }) => {
            rules.policy.check(reason.ip).is_ok()
        }
        _ => false,
    }
}

/// Who ran the command, as the audit log's address: `user@host`.
fn local_user() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{user}@{host}")
}
