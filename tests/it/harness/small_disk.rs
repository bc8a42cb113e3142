//! Owns `SmallDisk`: a `tmpfs` of a few MiB mounted for one test (the tests
//! run as root), filled on demand by a ballast file, unmounted when dropped.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// A small filesystem of one test's own.
pub struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts a `tmpfs` of `size` (`"8m"`) on a fresh folder, readable and
    /// writable by every user (a PostgreSQL server runs as another one).
    pub fn mount(size: &str) -> SmallDisk {
        let dir = tempfile::tempdir().expect("a mount point");
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=1777"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .expect("mount runs");
        assert!(
            status.success(),
            "mounting a tmpfs needs root (the tests run as root in CI)"
        );
        SmallDisk { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Bytes free on it now.
    pub fn available(&self) -> u64 {
        let out = Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(self.path())
            .output()
            .expect("df runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .expect("df prints the free bytes")
    }

    /// Fills it but for `left_free` bytes with a ballast file; returns its
    /// path (delete it to free the space).
    pub fn fill(&self, left_free: u64) -> PathBuf {
        let ballast = self.path().join("ballast");
        let size = self.available().saturating_sub(left_free);
        std::fs::write(&ballast, vec![0u8; size as usize]).expect("the ballast is written");
        ballast
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}
