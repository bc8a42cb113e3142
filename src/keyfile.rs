//! The passphrase that encrypts endpoint secrets: from configuration, or with
//! the embedded SQLite default, from a key file generated beside the database.

use std::{io::Write as _, os::unix::fs::OpenOptionsExt, path::PathBuf};

use anyhow::{Context as _, bail};

use crate::{config::Config, secret};

/// The key file for an SQLite database: `<database>.key`.
pub fn path_for(config: &Config) -> Option<PathBuf> {
    config.database.sqlite_path().map(|p| {
        let mut s = p.into_os_string();
        s.push(".key");
        PathBuf::from(s)
    })
}

/// Whether a master passphrase can be had at all, touching no file: one is
/// configured, or the database is an SQLite file to keep a key file beside.
pub fn check_configured(config: &Config) -> anyhow::Result<()> {
    if config.master_key.is_some() || path_for(config).is_some() {
        return Ok(());
    }
    bail!(
        "secrets.master_key is required with {} (set HOOKD_SECRETS__MASTER_KEY to a passphrase of at least {} characters)",
        if config.database.is_sqlite() {
            "an in-memory database"
        } else {
            "PostgreSQL"
        },
        secret::MIN_PASSPHRASE_CHARS
    );
}

/// The master passphrase: configured, or read from (or generated into) the
/// key file beside an SQLite database. PostgreSQL needs it configured.
pub fn master_passphrase(config: &Config) -> anyhow::Result<String> {
    if let Some(k) = &config.master_key {
        return Ok(k.clone());
    }
    check_configured(config)?;
    let Some(path) = path_for(config) else {
        bail!("secrets.master_key is required without an SQLite database file");
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let key = text.trim().to_string();
            if key.chars().count() < secret::MIN_PASSPHRASE_CHARS {
                bail!(
                    "the key file {} is shorter than {} characters",
                    path.display(),
                    secret::MIN_PASSPHRASE_CHARS
                );
            }
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = secret::generate_passphrase();
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .with_context(|| format!("creating the key file {}", path.display()))?;
            file.write_all(format!("{key}\n").as_bytes())
                .and_then(|_| file.sync_all())
                .with_context(|| format!("writing the key file {}", path.display()))?;
            tracing::warn!(
                path = %path.display(),
                "generated a new secrets key file (mode 0600); back it up with the database: endpoint secrets cannot be read without it"
            );
            Ok(key)
        }
        Err(e) => Err(e).with_context(|| format!("reading the key file {}", path.display())),
    }
}
