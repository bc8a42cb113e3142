//! The Unix domain socket a producer on the same host connects to
//! (`http.unix_socket`): bound with its file mode from the first moment,
//! a stale socket file left by a killed hookd replaced, anything else at the
//! path left alone, and the file removed when hookd stops.

use std::{
    io,
    os::unix::fs::{FileTypeExt as _, MetadataExt as _, PermissionsExt as _},
    os::unix::net::{UnixListener, UnixStream},
    path::{Path, PathBuf},
};

use anyhow::{Context as _, bail};

/// The socket file hookd made; dropping it removes the file, if it is still
/// the one hookd made.
#[derive(Debug)]
pub struct SocketFile {
    path: PathBuf,
    /// Device and inode of the file, to tell it from a later one.
    id: (u64, u64),
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == self.id);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A bound Unix domain socket and its file.
#[derive(Debug)]
pub struct UnixSocketListener {
    pub socket: UnixListener,
    pub file: SocketFile,
}

/// What is at the socket's path before hookd binds it.
#[derive(Debug, PartialEq, Eq)]
enum AtPath {
    Nothing,
    /// A socket nobody listens on: left by a process that was killed.
    StaleSocket,
    /// A socket another process serves.
    LiveSocket,
    NotASocket,
}

fn look(path: &Path) -> io::Result<AtPath> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(AtPath::Nothing),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_socket() {
        return Ok(AtPath::NotASocket);
    }
    match UnixStream::connect(path) {
        Ok(_) => Ok(AtPath::LiveSocket),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => Ok(AtPath::StaleSocket),
        Err(e) => Err(e),
    }
}

/// A folder only this user can enter, removed when dropped.
struct Private(PathBuf);

impl Private {
    /// `.hookd<pid>.<n>` in `parent`, the first `n` free.
    fn make(parent: &Path) -> io::Result<Private> {
        use std::os::unix::fs::DirBuilderExt as _;
        let mut n = 0;
        loop {
            let path = parent.join(format!(".hookd{}.{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Private(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Binds `path` with permission bits `mode`. The socket is made in a private
/// folder beside it (mode 0700), given its mode there, and moved into
/// place: no other user can connect in between.
pub fn bind(path: &Path, mode: u32) -> anyhow::Result<UnixSocketListener> {
    let shown = path.display();
    let cannot = || format!("cannot listen on {shown} (http.unix_socket)");
    match look(path).with_context(cannot)? {
        AtPath::Nothing => {}
        AtPath::StaleSocket => std::fs::remove_file(path)
            .with_context(|| format!("{}: removing the stale socket file", cannot()))?,
        AtPath::LiveSocket => bail!("{}: another process listens there", cannot()),
        AtPath::NotASocket => bail!(
            "{}: the path exists and is not a socket; hookd does not replace it",
            cannot()
        ),
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let private = Private::make(parent).with_context(|| {
        format!(
            "{}: making a private folder in {}",
            cannot(),
            parent.display()
        )
    })?;
    let staged = private.0.join("s");
    let socket = UnixListener::bind(&staged).with_context(|| {
        format!(
            "{}: binding {} (a socket path is at most 107 bytes)",
            cannot(),
            staged.display()
        )
    })?;
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("{}: setting its mode", cannot()))?;
    std::fs::rename(&staged, path).with_context(|| format!("{}: moving it in place", cannot()))?;
    drop(private);
    let meta = std::fs::symlink_metadata(path).with_context(cannot)?;
    Ok(UnixSocketListener {
        socket,
        file: SocketFile {
            path: path.to_path_buf(),
            id: (meta.dev(), meta.ino()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket path in `dir`, and `mode`, as the configuration gives them.
    struct Config {
        path: PathBuf,
        mode: u32,
    }

    fn config(dir: &Path, mode: u32) -> Config {
        Config {
            path: dir.join("hookd.sock"),
            mode,
        }
    }

    fn bind(cfg: &Config) -> anyhow::Result<UnixSocketListener> {
        super::bind(&cfg.path, cfg.mode)
    }

    #[test]
    fn the_socket_has_its_mode_and_goes_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), 0o600);
        let listener = bind(&cfg).expect("bound");
        let meta = std::fs::symlink_metadata(&cfg.path).unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        UnixStream::connect(&cfg.path).expect("clients connect at the configured path");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "the private folder is gone"
        );
        drop(listener);
        assert!(!cfg.path.exists(), "the file goes with the listener");
    }

    #[test]
    fn a_stale_socket_is_replaced_and_a_live_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), 0o660);
        let stale = UnixListener::bind(&cfg.path).unwrap();
        drop(stale); // the file stays, as after a SIGKILL
        assert_eq!(look(&cfg.path).unwrap(), AtPath::StaleSocket);
        let live = bind(&cfg).expect("a stale socket file is replaced");
        let refused = bind(&cfg).expect_err("a live socket is not taken over");
        assert!(
            format!("{refused:#}").contains("another process listens there"),
            "{refused:#}"
        );
        drop(live);
    }

    #[test]
    fn a_file_that_is_not_a_socket_is_never_touched() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), 0o660);
        std::fs::write(&cfg.path, "keep me").unwrap();
        let refused = bind(&cfg).expect_err("not a socket");
        assert!(
            format!("{refused:#}").contains("is not a socket"),
            "{refused:#}"
        );
        assert_eq!(std::fs::read_to_string(&cfg.path).unwrap(), "keep me");
    }
}
