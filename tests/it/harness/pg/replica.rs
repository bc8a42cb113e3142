//! Owns replication for failover tests: a primary whose every commit waits
//! for a synchronous streaming standby (`pg_basebackup -R`), and what a
//! failover does to them: the primary killed (`-m immediate`, as a lost
//! host), the standby promoted (`pg_ctl promote`).

use super::{
    PrivateCluster,
    server::{pg_ctl_start, pg_ctl_start_with, prepare_dir},
    tools::{run, server_cmd},
};

/// The primary's options: a commit returns once the standby has it.
const SYNCHRONOUS: &str = "-c synchronous_commit=on -c synchronous_standby_names='*'";

impl PrivateCluster {
    /// A primary and a standby streaming from it synchronously, both running:
    /// nothing a client saw committed on the primary is missing on the standby.
    pub async fn with_synchronous_standby() -> Result<(PrivateCluster, PrivateCluster), String> {
        let primary = PrivateCluster::new().await?;
        let standby = tokio::task::spawn_blocking({
            let (tools, port) = (primary.tools, primary.port);
            move || {
                let basebackup = tools
                    .pg_basebackup
                    .as_ref()
                    .ok_or("pg_basebackup not found beside the server binaries")?;
                let dir = tempfile::tempdir().map_err(|e| format!("no temp dir: {e}"))?;
                prepare_dir(tools, dir.path())?;
                run(
                    server_cmd(tools, basebackup, dir.path())
                        .arg("-D")
                        .arg(dir.path().join("data"))
                        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
                        .args(["-U", "postgres", "-R", "-X", "stream", "--no-sync"]),
                    "pg_basebackup",
                )?;
                let port = pg_ctl_start(tools, dir.path())?;
                Ok::<_, String>(PrivateCluster { tools, dir, port })
            }
        })
        .await
        .map_err(|e| format!("the standby's blocking task failed: {e}"))??;
        primary.stop().await?;
        let (tools, dir, port) = (
            primary.tools,
            primary.dir.path().to_path_buf(),
            primary.port,
        );
        tokio::task::spawn_blocking(move || pg_ctl_start_with(tools, &dir, port, SYNCHRONOUS))
            .await
            .map_err(|e| format!("the primary's blocking task failed: {e}"))??;
        Ok((primary, standby))
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server at once, as a lost host would (no checkpoint, no
    /// goodbye to clients or standbys).
    pub async fn kill(&self) -> Result<(), String> {
        let args = ["-m", "immediate", "-w", "-t", "30", "stop"];
        self.run_pg_ctl(&args, "pg_ctl stop -m immediate").await
    }

    /// Promotes a standby to a primary and waits until it takes writes.
    pub async fn promote(&self) -> Result<(), String> {
        let args = ["-w", "-t", "30", "promote"];
        self.run_pg_ctl(&args, "pg_ctl promote").await
    }
}
