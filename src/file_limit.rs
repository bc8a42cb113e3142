//! The process's limit on open files (`RLIMIT_NOFILE`): raised from the soft
//! limit to the hard one at start, as servers do, and read back so that the
//! API's connections and delivery's outbound budget fit inside it.

/// The limit before and after raising it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimit {
    /// The soft limit hookd started with.
    pub was: u64,
    /// The soft limit now in force.
    pub soft: u64,
    pub hard: u64,
}

/// Raises the soft limit to the hard one (idempotent) and reports both. When
/// the limit cannot be read, assumes the common default of 1024.
pub fn raise() -> FileLimit {
    use rlimit::Resource;
    let before = Resource::NOFILE.get().ok();
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let after = Resource::NOFILE.get().ok();
    match (before, after) {
        (Some((was, _)), Some((soft, hard))) => FileLimit { was, soft, hard },
        _ => FileLimit {
            was: 1024,
            soft: 1024,
            hard: 1024,
        },
    }
}
