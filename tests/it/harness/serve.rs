//! The environment of a child `hookd serve` on a free loopback port.

use super::{process::free_port, test_env};

/// A free loopback address (`127.0.0.1:<port>`) for a child `hookd serve`
/// over `url`, and its test environment listening there with `extra` keys:
/// (listen, env).
pub fn serve_env(url: &str, extra: &[(&str, &str)]) -> (String, Vec<(String, String)>) {
    let listen = format!("127.0.0.1:{}", free_port());
    let mut keys = vec![("HOOKD_HTTP__LISTEN", listen.as_str())];
    keys.extend_from_slice(extra);
    let env = test_env(url, &keys);
    (listen, env)
}
