//! A real tinyproxy (Debian's `tinyproxy`) as a child process: it listens on
//! a random port of a loopback address of the test's choosing, connects out
//! from another (`Bind`), so a receiver can tell the proxy's connections from
//! hookd's, optionally wants Basic credentials, and is killed on drop. Its
//! log (level Connect) lists every CONNECT it was asked for.

use std::{
    net::{IpAddr, SocketAddr},
    path::PathBuf,
    process::{Child, Command, Stdio},
};

use super::{SLOW, wait_until};

/// How the proxy is set up.
pub struct Setup {
    /// Where it listens (its port is chosen at random).
    pub listen: IpAddr,
    /// The address its outgoing connections come from.
    pub bind: IpAddr,
    /// `BasicAuth user password`, if set (tinyproxy reads letters, digits,
    /// `.`, `-` and `_` there, nothing else).
    pub basic_auth: Option<(&'static str, &'static str)>,
}

pub struct Tinyproxy {
    pub addr: SocketAddr,
    child: Option<Child>,
    log: PathBuf,
    dir: tempfile::TempDir,
}

impl Tinyproxy {
    /// Starts tinyproxy and waits until it accepts connections; `None` (after
    /// saying so, and failing under CI) when it is not installed.
    pub async fn start(setup: Setup) -> Option<Tinyproxy> {
        if !installed() {
            super::skip::skipping(
                "a test with a real proxy",
                "tinyproxy is not installed (apt-get install tinyproxy)",
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("a temp dir");
        let port = std::net::TcpListener::bind((setup.listen, 0))
            .and_then(|l| l.local_addr())
            .expect("a free port on the proxy's address")
            .port();
        let log = dir.path().join("tinyproxy.log");
        let mut conf = format!(
            "Port {port}\nListen {}\nBind {}\nLogFile \"{}\"\nLogLevel Connect\n\
             MaxClients 100\nTimeout 30\n",
            setup.listen,
            setup.bind,
            log.display()
        );
        if let Some((user, password)) = setup.basic_auth {
            conf.push_str(&format!("BasicAuth {user} {password}\n"));
        }
        let conf_path = dir.path().join("tinyproxy.conf");
        std::fs::write(&conf_path, conf).expect("the tinyproxy config is written");
        let stderr = std::fs::File::create(dir.path().join("stderr")).expect("a stderr file");
        let child = Command::new("tinyproxy")
            .arg("-d")
            .arg("-c")
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("tinyproxy starts");
        let mut proxy = Tinyproxy {
            addr: SocketAddr::new(setup.listen, port),
            child: Some(child),
            log,
            dir,
        };
        let addr = proxy.addr;
        let listening = wait_until(SLOW, || {
            // A config tinyproxy refuses ends it at once: stop waiting then.
            let exited = proxy
                .child
                .as_mut()
                .is_some_and(|c| c.try_wait().ok().flatten().is_some());
            async move {
                match tokio::net::TcpStream::connect(addr).await {
                    Ok(_) => Some(true),
                    Err(_) if exited => Some(false),
                    Err(_) => None,
                }
            }
        })
        .await;
        if listening != Some(true) {
            let stderr = std::fs::read_to_string(proxy.dir.path().join("stderr"));
            let log = proxy.log();
            proxy.stop();
            panic!(
                "tinyproxy did not listen on {addr}; its stderr:\n{}\nits log:\n{log}",
                stderr.unwrap_or_default()
            );
        }
        Some(proxy)
    }

    /// The proxy's URL for `egress.proxy`, with `credentials` if given.
    pub fn url(&self, credentials: Option<&str>) -> String {
        match credentials {
            Some(c) => format!("http://{c}@{}", self.addr),
            None => format!("http://{}", self.addr),
        }
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The targets of the CONNECT requests it was asked for (`ip:port`).
    pub fn connects(&self) -> Vec<String> {
        self.log()
            .lines()
            .filter_map(|l| l.split_once("): CONNECT ").map(|(_, rest)| rest))
            .filter_map(|rest| rest.split(' ').next().map(str::to_string))
            .collect()
    }

    /// Kills it and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().ok();
            child.wait().ok();
        }
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        self.stop();
    }
}

fn installed() -> bool {
    Command::new("tinyproxy")
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
