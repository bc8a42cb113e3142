//! Wiring: configuration to database, engine and web server.

use std::{net::SocketAddr, sync::Arc};

use actix_web::{App, web};
use anyhow::Context as _;

use crate::{
    config::Config,
    delivery::{Engine, Shared, client},
    domain::clock::SharedClock,
    http::{self, AppState},
    keyfile,
    secret::SecretBox,
    store,
};

/// The operator's notification endpoint as `notify.operator_url` says
/// (`url`: as `checked_operator_url` passed it).
async fn sync_operator_endpoint(shared: &Shared, url: Option<&str>) -> anyhow::Result<()> {
    let wanted = url.zip(shared.config.notify.operator_url.as_ref().map(|(_, s)| s));
    store::notices::sync_operator(
        &shared.db,
        &shared.secrets,
        wanted,
        shared.config.delivery.default_concurrency,
        shared.clock.now_ms(),
    )
    .await
    .context("setting up notify.operator_url")?;
    Ok(())
}

/// `notify.operator_url` judged as an endpoint's URL is at registration:
/// the egress rules, then its name resolved by hookd's own resolver and
/// every address judged, so a start refuses a URL whose name points inside.
/// A name that does not resolve now is left to the attempts (each judges
/// the addresses again), with a warning.
async fn checked_operator_url(config: &Config) -> anyhow::Result<Option<String>> {
    use crate::egress::{
        host::Host,
        remedy,
        resolver::{Resolve, ResolveError, ResolverActor},
        url_check::{EgressRules, RegistrationError, check_url},
    };
    let Some((url, _)) = &config.notify.operator_url else {
        return Ok(None);
    };
    let (egress, rules) = (&config.egress, EgressRules::from_config(&config.egress));
    let refused = |e: RegistrationError| {
        let remedy = remedy::for_registration(egress, url, &e)
            .map(|r| format!("; {r}"))
            .unwrap_or_default();
        anyhow::anyhow!("notify.operator_url: {e}{remedy}")
    };
    let checked = check_url(url, &rules).map_err(|e| refused(e.into()))?;
    if let Host::Name(name) = &checked.host {
        use actix::Actor as _;
        let resolver = ResolverActor::new(egress, rules.policy.clone())?.start();
        let resolved = resolver
            .send(Resolve(checked.host.clone()))
            .await
            .map_err(|e| refused(RegistrationError::Resolver(e.to_string())))?;
        match resolved {
            Ok(_) => {}
            Err(ResolveError::Dns { detail, .. }) => tracing::warn!(
                host = %name,
                %detail,
                "notify.operator_url does not resolve now; notices to it are retried until it does"
            ),
            Err(e) => return Err(refused(e.into())),
        }
    }
    Ok(Some(checked.url.to_string()))
}

/// Brings the schema up to date, saying in one line what that took (the
/// migrator's own step-by-step lines are held back by the log filter).
async fn migrate(db: &sea_orm::DatabaseConnection) -> anyhow::Result<()> {
    use migration::MigratorTrait as _;
    let pending = migration::Migrator::get_pending_migrations(db)
        .await
        .map_err(store::StoreError::Migrate)?;
    store::migrate(db).await?;
    if !pending.is_empty() {
        let last = pending
            .last()
            .map(|m| m.name().to_string())
            .unwrap_or_default();
        tracing::info!(applied = pending.len(), schema = %last, "database schema brought up to date");
    }
    Ok(())
}

/// Everything but the actors: key, database (migrated), TLS.
pub async fn prepare(config: Config, clock: SharedClock) -> anyhow::Result<Arc<Shared>> {
    // A catalog that does not load stops the start before anything else.
    let catalog = config.catalog.load().context("catalog.path")?;
    let passphrase = keyfile::master_passphrase(&config)?;
    let secrets = SecretBox::from_passphrase(&passphrase).context("secrets.master_key")?;
    // Before the database, so a refusal is the start's one line.
    let operator_url = checked_operator_url(&config).await?;
    let db = store::connect(&config.database).await?;
    migrate(&db).await?;
    let control = store::connect_control(&config.database, &db).await?;
    let trust =
        client::trust(config.egress.extra_ca_file.as_deref()).context("egress.extra_ca_file")?;
    let mut shared = Shared::new(
        db,
        control,
        clock,
        Arc::new(config),
        secrets,
        trust,
        catalog,
    );
    shared.telemetry =
        crate::telemetry::Telemetry::start(&shared.config.telemetry, shared.tls.clone())
            .context("telemetry")?;
    sync_operator_endpoint(&shared, operator_url.as_deref()).await?;
    if let Some(proxy) = &shared.config.egress.proxy {
        // Display leaves the credentials out.
        tracing::info!(proxy = %proxy, authenticated = proxy.credentials.is_some(), "outbound requests go through the egress proxy (CONNECT to checked addresses)");
    }
    let files = shared.files;
    tracing::info!(
        soft_was = files.was,
        soft = files.soft,
        hard = files.hard,
        outbound_connections = shared.budget.total(),
        "open-files limit raised to its hard limit; the outbound connection budget fits inside it"
    );
    Ok(Arc::new(shared))
}

/// A running hookd: the engine's actors and the web server.
pub struct Running {
    pub addr: SocketAddr,
    /// The operations listener's address, if `http.ops_listen` is set.
    pub ops_addr: Option<SocketAddr>,
    pub engine: Engine,
    pub shared: Arc<Shared>,
    pub server: actix_web::dev::ServerHandle,
    /// The unrevoked keys the front door knows; refresh it after making or
    /// revoking a key in this process.
    pub known_keys: Arc<http::known_keys::KnownKeys>,
    task: actix_rt::task::JoinHandle<std::io::Result<()>>,
    /// The periodic refresh of `known_keys`, stopped before the pool closes.
    keys_refresh: actix_rt::task::JoinHandle<()>,
    /// What other instances announce of keys and partners
    /// (`http::access_listener`), stopped before the pool closes.
    access_listener: actix_rt::task::JoinHandle<()>,
    /// The Unix socket's file, removed when hookd stops.
    _socket_file: Option<http::door::unix::SocketFile>,
    _lock: Option<crate::instance_lock::InstanceLock>,
}

/// SIGTERM and SIGINT, watched from the moment this is made: one that comes
/// before the wait for it begins (while the banner is still being written)
/// is kept, not left to kill the process unhandled.
pub struct StopSignal {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl StopSignal {
    pub fn watch() -> StopSignal {
        use tokio::signal::unix::{SignalKind, signal};
        let watch = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(error = %e, signal = name, "cannot watch a stop signal");
                None
            }
        };
        StopSignal {
            term: watch(SignalKind::terminate(), "SIGTERM"),
            int: watch(SignalKind::interrupt(), "SIGINT"),
        }
    }

    /// Resolves at the first SIGTERM or SIGINT.
    async fn received(mut self) {
        tokio::select! {
            () = next_of(&mut self.term) => {}
            () = next_of(&mut self.int) => {}
        }
    }
}

/// The next delivery of a watched signal; never, if it is not watched.
async fn next_of(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => drop(s.recv().await),
        None => std::future::pending().await,
    }
}

impl Running {
    /// Serves until SIGTERM or SIGINT, then stops gracefully: the engine
    /// drains (ingest answers 503 meanwhile; see `Engine::drain`) while the
    /// web server still answers, then the server stops and the pool closes.
    pub async fn serve_until_stopped(mut self, stop: StopSignal) -> anyhow::Result<()> {
        tokio::select! {
            served = &mut self.task => {
                // The server ended by itself: stop the rest and report why.
                self.keys_refresh.abort();
                self.access_listener.abort();
                self.engine.shutdown().await;
                self.shared.close_pools().await;
                return served
                    .context("the web server task failed")?
                    .context("the web server failed");
            }
            () = stop.received() => {}
        }
        let grace = self.shared.config.shutdown.grace;
        tracing::info!(
            grace_ms = grace.as_millis() as u64,
            "stopping: finishing the attempts in flight"
        );
        self.engine.drain(grace).await;
        self.server.stop(true).await;
        self.wait().await
    }

    /// Waits until the server stops (a signal, or `server.stop`), then stops
    /// the engine and closes the database pool while the runtime still runs:
    /// a pool or a LISTEN connection dropped after it would panic on exit.
    pub async fn wait(self) -> anyhow::Result<()> {
        let served = self
            .task
            .await
            .context("the web server task failed")
            .and_then(|r| r.context("the web server failed"));
        self.keys_refresh.abort();
        self.access_listener.abort();
        self.engine.shutdown().await;
        self.shared.close_pools().await;
        served
    }
}

/// Binds every listener (`http.listen`, and `http.ops_listen` and
/// `http.unix_socket` if set): the first thing a start does, so a taken
/// port stops it before the database is touched or any actor runs. The
/// error says what to change.
pub fn bind(config: &Config) -> anyhow::Result<http::door::Listeners> {
    http::door::bind_all(&config.http, bind_tcp)
}

/// Binds `addr` for the configuration key `key`, saying what to change if
/// it cannot.
fn bind_tcp(addr: SocketAddr, key: &str) -> anyhow::Result<http::door::Listener> {
    http::door::bind(addr, key).map_err(|e| {
        let kind = e
            .chain()
            .find_map(|c| c.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        let why = match kind {
            Some(std::io::ErrorKind::AddrInUse) => {
                "the address is in use (another hookd, or another program, listens there)"
            }
            Some(std::io::ErrorKind::PermissionDenied) => {
                "permission denied (ports below 1024 need privileges)"
            }
            Some(std::io::ErrorKind::AddrNotAvailable) => {
                "no interface of this machine has that address"
            }
            _ => return e,
        };
        let env = format!("HOOKD_{}", key.to_uppercase().replace('.', "__"));
        anyhow::anyhow!(
            "cannot listen on {addr} ({key}): {why}; choose another address with \
             {env}=127.0.0.1:<port> or {key} in the configuration file"
        )
    })
}

/// Starts the engine and the web server on the current actix System:
/// refuses what the configuration alone gets wrong (the catalog, the secrets
/// key) whatever else is running, then binds (see `bind`), then `start_on`.
pub async fn start(
    config: Config,
    clock: SharedClock,
    handle_signals: bool,
) -> anyhow::Result<Running> {
    config.catalog.load().context("catalog.path")?;
    keyfile::check_configured(&config)?;
    let role = config.cluster.role;
    role.fits(config.database.is_sqlite())
        .map_err(|why| anyhow::anyhow!("cluster.role: {why}"))?;
    let listeners = bind(&config)?;
    start_on(listeners, config, clock, handle_signals).await
}

/// Starts hookd on a listener already bound: the instance lock, the
/// database, then the engine and the web server.
pub async fn start_on(
    listeners: http::door::Listeners,
    config: Config,
    clock: SharedClock,
    handle_signals: bool,
) -> anyhow::Result<Running> {
    // Before migrations: a second binary must not change the schema under
    // the running one.
    let lock = crate::instance_lock::acquire(&config.database)?;
    let shared = prepare(config, clock).await?;
    let engine = Engine::start(shared.clone(), &listeners.public.addr.to_string()).await?;
    let known_keys =
        match http::known_keys::KnownKeys::load(shared.db.clone(), shared.clock.clone()).await {
            Ok(known) => known,
            Err(e) => {
                engine.shutdown().await;
                shared.close_pools().await;
                return Err(anyhow::Error::new(e).context("reading the API keys"));
            }
        };
    let known_partners = Arc::new(http::known_partners::KnownPartners::new(
        shared.clock.clone(),
    ));
    let api = &shared.config.api;
    let limiter = |rate, burst| {
        Arc::new(http::rate_limit::RateLimiter::new(
            rate,
            burst,
            shared.clock.clone(),
        ))
    };
    let state = AppState {
        shared: shared.clone(),
        engine: engine.clone(),
        limiter: limiter(api.rate_limit_per_second, api.rate_limit_burst),
        service_limiter: limiter(
            api.service_rate_limit_per_second,
            api.service_rate_limit_burst,
        ),
        anonymous_limiter: limiter(
            api.anonymous_rate_limit_per_second,
            api.anonymous_rate_limit_burst,
        ),
        known_keys: known_keys.clone(),
        known_partners: known_partners.clone(),
        check_hosts: Arc::new(crate::conformance::host_slots::HostSlots::new(
            crate::conformance::CHECK_INTERVAL,
        )),
    };
    let document = web::Data::new(http::openapi::Rendered::new());
    let max_uri = shared.config.http.max_uri_bytes;
    let serves_api = shared.config.cluster.role.serves_api();
    let expect_state = state.clone();
    let opened = http::door::open(
        listeners,
        &shared.config.http,
        2,
        handle_signals,
        move |surface| {
            let app = App::new().app_data(web::Data::new(state.clone()));
            let app = match surface {
                http::door::Surface::Whole if serves_api => app
                    .configure(http::routes)
                    .app_data(document.clone())
                    .configure(crate::web::home::routes)
                    .configure(crate::dashboard::routes)
                    .configure(crate::portal::routes),
                // A delivery-only instance answers the probes and metrics alone.
                http::door::Surface::Whole | http::door::Surface::Ops => {
                    app.configure(http::ops_routes)
                }
            };
            app.app_data(http::guard::MaxUri(max_uri))
                .default_service(web::to(http::not_found))
                .wrap(actix_web::middleware::from_fn(http::guard::limits))
        },
        move |req| http::expect::check(expect_state.clone(), req),
    );
    let door = match opened {
        Ok(door) => door,
        Err(e) => {
            // Stop what started while the runtime still runs.
            engine.shutdown().await;
            shared.close_pools().await;
            return Err(e);
        }
    };
    let http::door::Door {
        addr,
        ops_addr,
        socket_file,
        server,
    } = door;
    // Listening before the first request is answered.
    let access_listener = http::access_listener::listen(
        shared.db.clone(),
        shared.config.database.url.clone(),
        known_keys.clone(),
        known_partners,
    )
    .await;
    let handle = server.handle();
    let task = actix_rt::spawn(server);
    crate::delivery::egress_audit::start(shared.clone(), engine.resolver.clone());
    let keys_refresh = known_keys.keep_fresh();
    Ok(Running {
        addr,
        ops_addr,
        engine,
        shared,
        server: handle,
        known_keys,
        task,
        keys_refresh,
        access_listener,
        _socket_file: socket_file,
        _lock: lock,
    })
}
