//! A PostgreSQL LISTEN connection that is closed wherever it is dropped.
//!
//! sqlx hands a dropped connection back to its pool in a task, which needs a
//! Tokio runtime: dropped where none is current (an actix system torn down
//! without stopping hookd, or a test unwinding after a failure) it panics,
//! and a panic while unwinding aborts the process. Forgetting it instead
//! keeps its server connection open for the life of the process, and a
//! process that runs many in-process hookds then runs the server out of
//! connections. So a `Listening` dropped outside a runtime is dropped inside
//! a small runtime of its own, whose end closes the socket.

use std::ops::{Deref, DerefMut};

use sea_orm::sqlx::postgres::PgListener;

/// A `PgListener` that closes its connection when dropped, runtime or not.
pub struct Listening(Option<PgListener>);

impl Listening {
    pub fn new(listener: PgListener) -> Self {
        Self(Some(listener))
    }
}

impl Deref for Listening {
    type Target = PgListener;
    fn deref(&self) -> &PgListener {
        self.0.as_ref().expect("a listener until dropped")
    }
}

impl DerefMut for Listening {
    fn deref_mut(&mut self) -> &mut PgListener {
        self.0.as_mut().expect("a listener until dropped")
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let Some(listener) = self.0.take() else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            return drop(listener);
        }
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            // The hand-back task is spawned here and cancelled with the
            // runtime, which drops the connection and so closes it.
            Ok(runtime) => runtime.block_on(async move { drop(listener) }),
            Err(_) => std::mem::forget(listener),
        }
    }
}
