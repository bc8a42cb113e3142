//! Owns `PrivateCluster`: a throwaway cluster of one test's own, in a temp dir on a free port, that
//! the test may stop and start (the shared cluster must stay up for the others).

use std::process::Command;

use super::server::{initdb, pg_ctl_start, pg_ctl_start_on, prepare_dir};
use super::tools::{Tools, run, server_cmd, tools};

/// A PostgreSQL cluster of one test's own, in a temp dir on a free port, for a test that stops
/// and starts the server (the shared cluster must stay up for the others); stopped when dropped.
pub struct PrivateCluster {
    pub(super) tools: &'static Tools,
    pub(super) dir: tempfile::TempDir,
    pub(super) port: u16,
}

impl PrivateCluster {
    /// Makes and starts the cluster (`initdb`, then `pg_ctl start`; a few seconds).
    pub async fn new() -> Result<PrivateCluster, String> {
        PrivateCluster::new_in(&std::env::temp_dir()).await
    }

    /// Like `new`, with its folder made inside `parent` (a small disk).
    pub async fn new_in(parent: &std::path::Path) -> Result<PrivateCluster, String> {
        let parent = parent.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let tools = tools()?;
            let dir = tempfile::tempdir_in(&parent)
                .map_err(|e| format!("no folder for a cluster in {}: {e}", parent.display()))?;
            prepare_dir(tools, dir.path())?;
            initdb(tools, dir.path())?;
            let port = pg_ctl_start(tools, dir.path())?;
            Ok(PrivateCluster { tools, dir, port })
        })
        .await
        .map_err(|e| format!("PrivateCluster::new_in: the blocking task failed: {e}"))?
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server (`-m fast`: clients are disconnected at once) and waits until it is down.
    pub async fn stop(&self) -> Result<(), String> {
        self.run_pg_ctl(&["-m", "fast", "-w", "-t", "30", "stop"], "pg_ctl stop")
            .await
    }

    /// Runs `pg_ctl` on this cluster with `args`, off the runtime.
    pub(super) async fn run_pg_ctl(&self, args: &[&str], what: &'static str) -> Result<(), String> {
        let mut cmd = self.pg_ctl(args);
        tokio::task::spawn_blocking(move || run(&mut cmd, what).map(drop))
            .await
            .map_err(|e| format!("{what}: the blocking task failed: {e}"))?
    }

    /// Starts the stopped server again, on the same port.
    pub async fn start(&self) -> Result<(), String> {
        let (tools, dir, port) = (self.tools, self.dir.path().to_path_buf(), self.port);
        tokio::task::spawn_blocking(move || pg_ctl_start_on(tools, &dir, port))
            .await
            .map_err(|e| format!("pg_ctl start: the blocking task failed: {e}"))?
    }

    pub(super) fn pg_ctl(&self, args: &[&str]) -> Command {
        let mut cmd = server_cmd(self.tools, &self.tools.pg_ctl, self.dir.path());
        cmd.arg("-D").arg(self.dir.path().join("data")).args(args);
        cmd
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        // Whether it runs or not; the temp dir goes after.
        let _ = run(
            &mut self.pg_ctl(&["-m", "immediate", "-w", "-t", "30", "stop"]),
            "pg_ctl stop",
        );
    }
}
