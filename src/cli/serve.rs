//! `hookd serve` and `hookd migrate`: start-up, where every failure before
//! hookd serves (a taken port, the database, the key, the catalog) is one
//! line and exit 2, and what to do next once it listens.

use std::{path::Path, sync::Arc};

use super::{dev, exit::Exit};
use crate::{
    app::{self, Running},
    config::Config,
    domain::clock::{Clock as _, SystemClock},
    store::{self, keys::Role},
};

/// `hookd serve`: runs until SIGINT or SIGTERM, after telling the person at
/// the terminal what to do next. `dev`: dev mode (see `dev`).
pub async fn serve(
    mut config: Config,
    dev_mode: bool,
    config_file: Option<&Path>,
) -> anyhow::Result<()> {
    if dev_mode {
        dev::allow_local(&mut config.egress);
    }
    let database = store::redact_url(&config.database.url);
    let db_config = config.database.clone();
    let running = app::start(config, Arc::new(SystemClock), false)
        .await
        .map_err(Exit::startup)?;
    // From here a stop signal is handled, even while the banner is written.
    let stop = app::StopSignal::watch();
    tracing::info!(address = %running.addr, %database, dev = dev_mode, role = %running.shared.config.cluster.role, "hookd is serving");
    let side = side_listeners(&running);
    if dev_mode {
        tracing::warn!("{}", dev::WARNING);
    }
    let hookd = dev::invocation(config_file);
    // The keys of this run; a killed run's are revoked first.
    let run_id = crate::domain::ids::new_id("run");
    let role = running.shared.config.cluster.role;
    let next = if !role.serves_api() {
        Ok(delivery_banner(&running, &database))
    } else if dev_mode {
        dev_banner(&running, &database, &hookd, &run_id).await
    } else {
        Ok(banner(&running, &database, &hookd))
    };
    match next {
        // A closed stdout (`hookd serve | head`) must not stop a server.
        Ok(text) => {
            use std::io::Write as _;
            let _ = writeln!(std::io::stdout(), "{text}{side}");
        }
        Err(e) => {
            running.server.stop(true).await;
            let _ = running.wait().await;
            return Err(e.context("making the dev mode's keys"));
        }
    }
    let served = running.serve_until_stopped(stop).await;
    if dev_mode {
        revoke_run_keys(&db_config, &run_id).await;
    }
    served?;
    tracing::info!("hookd stopped");
    Ok(())
}

/// Revokes the keys this dev run made, on a connection of its own (the
/// run's pools are closed by now). A failure is logged: the next
/// `serve --dev` revokes them.
async fn revoke_run_keys(db_config: &crate::config::DatabaseConfig, run_id: &str) {
    let revoked = async {
        let db = store::connect(db_config).await?;
        let n = store::dev_keys::revoke(&db, Some(run_id), SystemClock.now_ms()).await;
        let _ = db.close().await;
        n
    }
    .await;
    match revoked {
        Ok(n) => tracing::info!(revoked = n, "revoked the keys made for this dev run"),
        Err(e) => tracing::warn!(error = %e,
            "revoking the keys made for this dev run failed; the next `serve --dev` revokes them"),
    }
}

/// The operations listener and the Unix socket, if on, one line each.
fn side_listeners(running: &Running) -> String {
    let mut lines = String::new();
    if let Some(ops) = running.ops_addr {
        tracing::info!(address = %ops, "serving /healthz, /readyz and /metrics");
        lines += &format!("Probes and metrics: http://{ops}/healthz, /readyz, /metrics\n");
    }
    if let Some(socket) = &running.shared.config.http.unix_socket {
        let path = socket.display();
        tracing::info!(socket = %path, "serving the API on a Unix socket");
        lines += &format!(
            "The API on a Unix socket too: curl --unix-socket {path} http://hookd/healthz\n"
        );
    }
    lines
}

/// An event of the running catalog that `POST /v1/events` takes as it is:
/// `usage.finalized` if the catalog has it, else its first business type.
fn sample(running: &Running) -> (String, u32, serde_json::Value) {
    let catalog = &running.shared.catalog;
    catalog
        .get("usage.finalized")
        .or_else(|| {
            catalog
                .types()
                .find(|t| !crate::catalog::OWN_TYPES.contains(&t.name.as_str()))
        })
        .map_or(("usage.finalized".into(), 1, serde_json::json!({})), |t| {
            (
                t.name.clone(),
                t.latest().version,
                t.latest().example.clone(),
            )
        })
}

/// A delivery-only instance: what it does, and where its probes are.
fn delivery_banner(running: &Running, database: &str) -> String {
    format!(
        "\nhookd delivers the events committed to {database} (role delivery): it serves no API;\n\
         http://{addr} answers /healthz, /readyz and /metrics only.\n",
        addr = running.addr
    )
}

/// What to do next, outside dev mode.
fn banner(running: &Running, database: &str, hookd: &str) -> String {
    let (event_type, version, data) = sample(running);
    let event = dev::event_json(&event_type, "<id>", version, &data);
    format!(
        "\nhookd is listening on http://{addr} (database {database}).\n\
         Next, in another terminal:\n  \
         {hookd} partner create --name Acme --json                 # -> partner id\n  \
         {hookd} key create --service --json                       # -> service key for POST /v1/events\n  \
         {hookd} endpoint create --partner <id> --url https://<your receiver>/webhooks --json   # -> signing secret\n  \
         curl -H 'Authorization: Bearer <service key>' -H 'content-type: application/json' \\\n    \
         -d '{event}' \\\n    \
         http://{addr}/v1/events\n\
         Callback URLs must be public https here. For a receiver on this machine, run `{hookd} serve --dev`\n\
         instead (a laptop only): it prints the commands to a first verified delivery.\n{api_only}",
        addr = running.addr,
        api_only = if running.shared.config.cluster.role.delivers() {
            ""
        } else {
            "This instance (role api) sends nothing: run `hookd serve --role delivery` on the same database.\n"
        }
    )
}

/// Dev mode's banner, with an operator key and a service key made for this
/// run (marked so: revoked when it stops), after revoking those a killed
/// run left.
async fn dev_banner(
    running: &Running,
    database: &str,
    hookd: &str,
    run_id: &str,
) -> anyhow::Result<String> {
    let db = &running.shared.db;
    let now = SystemClock.now_ms();
    let leftover = store::dev_keys::revoke(db, None, now).await?;
    if leftover > 0 {
        tracing::info!(
            revoked = leftover,
            "revoked the keys an earlier dev run left (it was killed)"
        );
    }
    let operator = store::keys::create(db, Role::Operator, None, now).await?;
    store::dev_keys::mark(db, &operator.id, run_id, now).await?;
    let service = store::keys::create(db, Role::Service, None, now).await?;
    store::dev_keys::mark(db, &service.id, run_id, now).await?;
    running.known_keys.changed().await;
    let (event_type, version, data) = sample(running);
    let base = format!("http://{}", running.addr);
    let variables = dev::hookd_variables(std::env::vars());
    Ok(dev::banner(&dev::Banner {
        base: &base,
        database,
        operator_key: &operator.key,
        service_key: &service.key,
        hookd,
        variables: &variables,
        receiver_port: dev::receiver_port(running.addr.port()),
        sample: (&event_type, version, &data),
    }))
}

/// `hookd migrate`: brings the schema up to date and says what it did.
/// A database it cannot reach is a start-up error (exit 2).
pub async fn migrate(config: &Config) -> anyhow::Result<()> {
    use migration::MigratorTrait as _;
    let db = store::connect(&config.database)
        .await
        .map_err(Exit::startup)?;
    let result = async {
        let pending = migration::Migrator::get_pending_migrations(&db).await?;
        store::migrate(&db).await?;
        anyhow::Ok(pending.len())
    }
    .await;
    let _ = db.close().await;
    let shown = store::redact_url(&config.database.url);
    match result? {
        0 => println!("{shown} is up to date"),
        n => println!(
            "migrated {shown}: {n} migration{} applied",
            if n == 1 { "" } else { "s" }
        ),
    }
    Ok(())
}
