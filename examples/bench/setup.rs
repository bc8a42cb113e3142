//! A fresh database for a run, hookd's configuration for loopback delivery,
//! and the rows a run needs: partners, a service key and their endpoints.

use anyhow::Context as _;
use hookd::store::{self, endpoints::EndpointStatus, endpoints::NewEndpoint, keys::Role};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

pub const MASTER_KEY: &str = "bench-master-key-0123456789-abcdefghij";

/// A fresh database URL for `backend`, and the folder that holds an SQLite
/// file (deleted when dropped, unless `keep`). `None` if PostgreSQL is not
/// available here.
pub async fn fresh_url(
    backend: &str,
    keep: bool,
) -> anyhow::Result<Option<(String, Option<tempfile::TempDir>)>> {
    if backend == "sqlite" {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}/bench.db", dir.path().display());
        if keep {
            eprintln!("keeping {}", dir.keep().display());
            return Ok(Some((url, None)));
        }
        return Ok(Some((url, Some(dir))));
    }
    match super::pg::fresh_database().await {
        Ok(url) => Ok(Some((url, None))),
        Err(e) => {
            println!("postgres skipped: the private PostgreSQL cluster did not start: {e}");
            Ok(None)
        }
    }
}

/// hookd's environment: the database at `url`, listening on `listen`, loopback
/// delivery over http to any port, no practical API rate limit, then `extra`,
/// then `HOOKD_*` variables of this process (except the database URL).
pub fn env(url: &str, listen: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let base = [
        ("HOOKD_DATABASE__URL", url),
        ("HOOKD_SECRETS__MASTER_KEY", MASTER_KEY),
        ("HOOKD_HTTP__LISTEN", listen),
        ("HOOKD_EGRESS__ALLOW_HTTP", "true"),
        ("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.0/8"]"#),
        ("HOOKD_EGRESS__ALLOWED_PORTS", "[]"),
        // The producer is one service key sending hundreds of POSTs a second.
        ("HOOKD_API__RATE_LIMIT_PER_SECOND", "1000000"),
        ("HOOKD_API__RATE_LIMIT_BURST", "1000000"),
        ("HOOKD_API__SERVICE_RATE_LIMIT_PER_SECOND", "1000000"),
        ("HOOKD_API__SERVICE_RATE_LIMIT_BURST", "1000000"),
    ];
    let mut env: Vec<(String, String)> = base
        .iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.extend(
        std::env::vars().filter(|(k, _)| k.starts_with("HOOKD_") && k != "HOOKD_DATABASE__URL"),
    );
    env
}

/// What `populate` made.
pub struct Populated {
    pub key: String,
    pub partners: Vec<String>,
}

/// `partners` partners and a service key; the endpoints at `urls` are split
/// over the partners in order, equal shares, each taking `concurrency`
/// requests at once.
pub async fn populate(
    db: &DatabaseConnection,
    partners: usize,
    urls: &[String],
    concurrency: u32,
) -> anyhow::Result<Populated> {
    let now = chrono::Utc::now().timestamp_millis();
    let secrets = hookd::secret::SecretBox::from_passphrase(MASTER_KEY)?;
    let key = store::keys::create(db, Role::Service, None, now).await?.key;
    let mut ids = Vec::new();
    let share = urls.len().div_ceil(partners.max(1)).max(1);
    for (i, chunk) in urls.chunks(share).enumerate() {
        let name = format!("Bench {i}");
        let partner = store::partners::create(db, None, &name, now).await?.id;
        for url in chunk {
            let endpoint = NewEndpoint {
                partner_id: partner.clone(),
                url: url.clone(),
                description: String::new(),
                event_types: Vec::new(),
                schema_version: None,
                schema_versions: Default::default(),
                concurrency,
                rate_limit: None,
                status: EndpointStatus::Active,
                ordering: Default::default(),
                on_dead: Default::default(),
                filter: None,
            };
            store::endpoints::create(db, &secrets, endpoint, hookd::signing::Scheme::V1, now)
                .await?;
        }
        ids.push(partner);
    }
    Ok(Populated { key, partners: ids })
}

/// A migrated database at `url`, connected as hookd would.
pub async fn migrated(env: Vec<(String, String)>) -> anyhow::Result<DatabaseConnection> {
    let config = hookd::config::Config::load(None, env)?;
    let db = store::connect(&config.database).await?;
    store::migrate(&db).await?;
    Ok(db)
}

/// `SELECT COUNT(*) AS n …` → n.
pub async fn count(db: &DatabaseConnection, sql: &str) -> anyhow::Result<i64> {
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?
        .context("no row")?;
    Ok(row.try_get::<i64>("", "n")?)
}

/// The database's view: deliveries, how many were delivered, and attempts.
pub async fn counts(db: &DatabaseConnection) -> String {
    let all = count(db, "SELECT COUNT(*) AS n FROM delivery").await;
    let ok = count(
        db,
        "SELECT COUNT(*) AS n FROM delivery WHERE state = 'delivered'",
    )
    .await;
    let attempts = count(db, "SELECT COUNT(*) AS n FROM attempt").await;
    match (all, ok, attempts) {
        (Ok(all), Ok(ok), Ok(attempts)) => {
            format!("database: {all} deliveries, {ok} delivered, {attempts} attempts")
        }
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => format!("counting failed: {e:#}"),
    }
}
