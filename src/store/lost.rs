//! A statement whose connection went away under it. A pooled connection in
//! steady use is not checked before each statement (see `PING_IF_IDLE_FOR`),
//! so the first statement on a connection the server has ended, or whose
//! socket broke, fails itself: that is the database being unreachable, for
//! the caller to answer 503 and retry, not a query that went wrong.

use sea_orm::{DbErr, RuntimeErr, sqlx};

/// Whether `e` says the statement's connection was lost: the socket broke,
/// or the server ended the session (SQLSTATE class 08, a connection
/// exception, or 57P, an operator's intervention: terminated, shutting
/// down, restarting).
pub fn is_connection_lost(e: &DbErr) -> bool {
    let (DbErr::Query(RuntimeErr::SqlxError(cause)) | DbErr::Exec(RuntimeErr::SqlxError(cause))) =
        e
    else {
        return false;
    };
    lost(cause)
}

fn lost(cause: &sqlx::Error) -> bool {
    match cause {
        sqlx::Error::Io(_)
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::{io, sync::Arc};

    use super::*;

    fn query_failed(cause: sqlx::Error) -> DbErr {
        DbErr::Query(RuntimeErr::SqlxError(Arc::new(cause)))
    }

    #[test]
    fn a_broken_socket_under_a_statement_is_a_lost_connection() {
        let broken = io::Error::from(io::ErrorKind::BrokenPipe);
        assert!(is_connection_lost(&query_failed(sqlx::Error::Io(broken))));
        assert!(is_connection_lost(&query_failed(sqlx::Error::PoolClosed)));
    }

    #[test]
    fn a_statement_the_database_refused_is_not() {
        assert!(!is_connection_lost(&query_failed(sqlx::Error::RowNotFound)));
        assert!(!is_connection_lost(&query_failed(sqlx::Error::Protocol(
            "an answer out of place".into()
        ))));
        assert!(!is_connection_lost(&DbErr::Custom("no".into())));
    }
}
