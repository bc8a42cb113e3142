//! Which database an operator command works on, and the refusal to make
//! one: only `serve`, `migrate` and `demo` create a database. Any other
//! command on a SQLite file that is not there, or a PostgreSQL database it
//! cannot reach, stops with exit 2, naming the database it looked for and
//! how to point it at the one `serve` uses.

use std::path::{Path, PathBuf};

use super::exit::Exit;
use crate::{config::DatabaseConfig, store};

/// How to point a command at the database `serve` uses (one line, as
/// every start-up error is).
pub const HOW_TO_POINT: &str = "point the command at the database `serve` uses: the same \
     --config FILE, or HOOKD_DATABASE__URL (sqlite:///path/to/hookd.db, postgres://user@host/db), \
     or run it from the folder `serve` runs in (a relative SQLite path is read from the current \
     folder); `hookd migrate` creates a new database";

/// The SQLite file `cfg` names, made absolute against `cwd`; `None` for
/// PostgreSQL and in-memory SQLite.
pub fn sqlite_file(cfg: &DatabaseConfig, cwd: &Path) -> Option<PathBuf> {
    cfg.sqlite_path().map(|p| cwd.join(p))
}

/// The refusal for a SQLite file that is not there.
pub fn missing_file(path: &Path) -> String {
    format!(
        "no hookd database at {} (this command creates none); {HOW_TO_POINT}",
        path.display()
    )
}

/// Refuses a SQLite database whose file is not there (exit 2), before
/// anything would create it.
pub fn require_existing(cfg: &DatabaseConfig) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().unwrap_or_default();
    match sqlite_file(cfg, &cwd) {
        Some(path) if !path.exists() => {
            Err(Exit::Startup(anyhow::anyhow!(missing_file(&path))).into())
        }
        _ => Ok(()),
    }
}

/// Connects to the database that must already exist; a failure names it
/// and says how to point at the right one (exit 2).
pub async fn connect_existing(cfg: &DatabaseConfig) -> anyhow::Result<sea_orm::DatabaseConnection> {
    require_existing(cfg)?;
    store::connect(cfg).await.map_err(|e| {
        let cause = format!("{:#}", anyhow::Error::new(e));
        Exit::Startup(anyhow::anyhow!("{cause} (does it exist?); {HOW_TO_POINT}")).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(url: &str) -> DatabaseConfig {
        let mut cfg = crate::config::Config::load(None, std::iter::empty())
            .expect("the defaults load")
            .database;
        cfg.url = url.to_string();
        cfg
    }

    #[test]
    fn a_relative_sqlite_path_is_looked_for_in_the_current_folder() {
        let file = sqlite_file(&sqlite("sqlite://hookd.db"), Path::new("/srv/x"));
        assert_eq!(file, Some(PathBuf::from("/srv/x/hookd.db")));
        let file = sqlite_file(&sqlite("sqlite:///data/h.db?mode=rwc"), Path::new("/srv/x"));
        assert_eq!(file, Some(PathBuf::from("/data/h.db")));
        assert_eq!(
            sqlite_file(&sqlite("postgres://u@h/db"), Path::new("/")),
            None
        );
    }

    #[test]
    fn the_refusal_names_the_file_and_every_way_to_point_at_the_right_one() {
        let text = missing_file(Path::new("/home/me/hookd.db"));
        for wanted in [
            "/home/me/hookd.db",
            "--config",
            "HOOKD_DATABASE__URL",
            "the folder `serve` runs in",
        ] {
            assert!(text.contains(wanted), "`{wanted}` is not in: {text}");
        }
    }
}
