//! Owns the tests' private PostgreSQL: one cluster shared by every test process, and a fresh,
//! empty database per call; and, for a test that stops and starts the server, a cluster of its own.
//!
//! - `tools`: finding `initdb`, `pg_ctl` and the client programs, and running them (as root,
//!   the server-side ones as `postgres` or `nobody` through `runuser`);
//! - `server`: making a cluster in a folder and starting it on a free port;
//! - `shared`: the cluster shared by all test processes, and `fresh_database` on it;
//! - `private`: `PrivateCluster`, a throwaway cluster of one test's own;
//! - `replica`: a primary with a synchronous streaming standby, promoting and killing them.

mod private;
mod reaper;
mod replica;
mod server;
mod shared;
mod tools;

#[allow(
    unused_imports,
    reason = "examples/bench includes this module by path and has no use for PrivateCluster"
)]
pub use private::PrivateCluster;
pub use shared::fresh_database;
