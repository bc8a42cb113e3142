//! Where a setting comes from, seen from outside a running `hookd`: a value
//! in the `--config` file beats the default, a `HOOKD_*` variable beats the
//! file, and a key set by neither keeps its default.

use crate::harness::{
    SLOW,
    process::{Hookd, free_port, healthy},
    wait_until,
};

/// The status of `GET /healthz?pad=…` with a request target `length` bytes long.
async fn status_of_a_target(http: &awc::Client, base: &str, length: usize) -> u16 {
    let path = "/healthz?pad=";
    let target = format!("{path}{}", "a".repeat(length - path.len()));
    let res = http
        .get(format!("{base}{target}"))
        .send()
        .await
        .expect("hookd answers");
    res.status().as_u16()
}

#[hookd_test_macros::test]
async fn the_environment_beats_the_file_and_the_file_beats_the_defaults() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (file_port, env_port) = (free_port(), free_port());
    let file = dir.path().join("hookd.toml");
    // http.max_uri_bytes defaults to 8192; the file lowers it to its minimum.
    std::fs::write(
        &file,
        format!("[http]\nlisten = \"127.0.0.1:{file_port}\"\nmax_uri_bytes = 1024\n"),
    )
    .expect("the configuration file is written");
    let env = [(
        "HOOKD_HTTP__LISTEN".to_string(),
        format!("127.0.0.1:{env_port}"),
    )];
    let file_arg = file.display().to_string();
    // No database.url anywhere: the default, `sqlite://hookd.db`, is a file in
    // the working directory, which `Hookd` sets to `dir`.
    let hookd = Hookd::start(&["--config", &file_arg, "serve"], &env, dir.path(), "hookd");
    let http = awc::Client::default();
    let url = |port: u16| format!("http://127.0.0.1:{port}");
    let answered = wait_until(SLOW, || async {
        for port in [env_port, file_port] {
            if healthy(&http, &url(port)).await {
                return Some(port);
            }
        }
        None
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "hookd answered on neither port within {SLOW:?}; stderr:\n{}",
            hookd.stderr()
        )
    });
    assert_eq!(
        answered, env_port,
        "HOOKD_HTTP__LISTEN did not win over the file's http.listen: hookd listens on {answered}"
    );
    let base = url(env_port);

    let serving = wait_until(SLOW, || async {
        let stderr = hookd.stderr();
        stderr
            .lines()
            .find(|l| l.contains("hookd is serving"))
            .map(str::to_string)
    })
    .await
    .unwrap_or_else(|| panic!("no \"hookd is serving\" line:\n{}", hookd.stderr()));
    assert!(
        serving.contains(&format!("address=127.0.0.1:{env_port}")),
        "HOOKD_HTTP__LISTEN did not win over the file's http.listen ({file_port}): {serving}"
    );

    assert_eq!(
        status_of_a_target(&http, &base, 1024).await,
        200,
        "a target of exactly the file's http.max_uri_bytes was refused"
    );
    assert_eq!(
        status_of_a_target(&http, &base, 2000).await,
        414,
        "the file's http.max_uri_bytes = 1024 did not beat the default 8192"
    );

    assert!(
        serving.contains("database=sqlite://hookd.db"),
        "database.url, set by neither, is not its default: {serving}"
    );
    assert!(
        dir.path().join("hookd.db").is_file(),
        "the default database file hookd.db was not created in the working directory"
    );
}
