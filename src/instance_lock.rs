//! SQLite takes one running hookd: two engines on one file would each claim
//! and send the same work under their own caps. The engine holds an
//! exclusive lock on `<database>.lock` while it runs; a second one stops at
//! start and says why. The CLI's one-shot commands take no lock, so they
//! work beside a running `serve`. PostgreSQL needs no lock.

use std::{fs::File, io::Write as _, path::PathBuf};

use anyhow::{Context as _, bail};

use crate::config::DatabaseConfig;

/// Held for as long as the engine runs; the OS releases it if the process dies.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
}

fn lock_path(database: &DatabaseConfig) -> Option<PathBuf> {
    database.sqlite_path().map(|p| {
        let mut s = p.into_os_string();
        s.push(".lock");
        PathBuf::from(s)
    })
}

/// Takes the lock for an SQLite file database; `None` for anything else.
pub fn acquire(database: &DatabaseConfig) -> anyhow::Result<Option<InstanceLock>> {
    let Some(path) = lock_path(database) else {
        return Ok(None);
    };
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path);
    let mut file = match opened {
        Ok(file) => file,
        // No folder for the database: opening it fails next, naming it.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot open the instance lock {}", path.display()));
        }
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            let holder = holder.trim();
            bail!(
                "another hookd{} is already running on this SQLite database ({}); SQLite takes \
                 one instance. To run several, use PostgreSQL (HOOKD_DATABASE__URL=postgres://…; \
                 see docs/cluster.md)",
                if holder.is_empty() {
                    String::new()
                } else {
                    format!(" (pid {holder})")
                },
                path.display()
            );
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("cannot lock {}", path.display()));
        }
    }
    file.set_len(0)?;
    write!(file, "{}", std::process::id())?;
    Ok(Some(InstanceLock { _file: file }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(path: &std::path::Path) -> DatabaseConfig {
        DatabaseConfig {
            url: format!("sqlite://{}", path.display()),
            max_connections: 1,
            acquire_timeout: std::time::Duration::from_secs(1),
            sqlite_synchronous: crate::config::SqliteSynchronous::Full,
        }
    }

    #[test]
    fn a_second_engine_on_one_sqlite_file_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().expect("a folder");
        let db = sqlite(&dir.path().join("hookd.db"));
        let first = acquire(&db).expect("the first takes the lock");
        assert!(first.is_some());
        let err = acquire(&db).expect_err("the second is refused");
        let message = err.to_string();
        assert!(message.contains("PostgreSQL"), "{message}");
        assert!(
            message.contains(&std::process::id().to_string()),
            "{message}"
        );
        drop(first);
        assert!(acquire(&db).expect("free again").is_some());
    }

    #[test]
    fn postgres_and_in_memory_databases_take_no_lock() {
        let pg = DatabaseConfig {
            url: "postgres://u@h/db".into(),
            max_connections: 1,
            acquire_timeout: std::time::Duration::from_secs(1),
            sqlite_synchronous: crate::config::SqliteSynchronous::Full,
        };
        assert!(acquire(&pg).expect("no lock needed").is_none());
    }
}
