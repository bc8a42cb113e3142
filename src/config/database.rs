//! `database.sqlite_synchronous`: how hard SQLite makes sure a commit is on
//! the disk before hookd answers for it.

use serde::{Deserialize, Serialize};

use super::{ConfigError, invalid};

/// SQLite's `synchronous` setting in WAL mode, as hookd offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SqliteSynchronous {
    /// Each commit is synced to the disk before it returns: an acknowledged
    /// event survives an operating-system crash and a power cut.
    Full,
    /// Commits are synced at each WAL checkpoint: an acknowledged event
    /// survives a process kill, but an operating-system crash or a power
    /// cut may roll back the last transactions.
    Normal,
}

impl SqliteSynchronous {
    /// `full` or `normal`, as written in the configuration.
    pub fn parse(text: &str) -> Result<SqliteSynchronous, ConfigError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "full" => Ok(SqliteSynchronous::Full),
            "normal" => Ok(SqliteSynchronous::Normal),
            other => Err(invalid(
                "database.sqlite_synchronous",
                format!("`{other}` is not `full` or `normal`"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SqliteSynchronous::Full => "full",
            SqliteSynchronous::Normal => "normal",
        }
    }

    /// The value `PRAGMA synchronous` reads back for it.
    pub fn pragma_value(self) -> i64 {
        match self {
            SqliteSynchronous::Full => 2,
            SqliteSynchronous::Normal => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_is_full_or_normal_in_any_case() {
        assert_eq!(
            SqliteSynchronous::parse("full").unwrap(),
            SqliteSynchronous::Full
        );
        assert_eq!(
            SqliteSynchronous::parse(" NORMAL ").unwrap(),
            SqliteSynchronous::Normal
        );
        let refused = SqliteSynchronous::parse("off").unwrap_err().to_string();
        assert!(refused.contains("database.sqlite_synchronous"), "{refused}");
    }
}
