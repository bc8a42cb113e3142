//! Stopping the real `hookd` binary: SIGTERM and SIGINT end `serve` with exit
//! status 0 and no panic, on both backends, and a taken port stops the start
//! with an error that names it, and no panic.

use std::{process::ExitStatus, time::Duration};

use crate::{
    harness::{
        self, Backend,
        process::{Hookd, free_port},
    },
    on_both_backends,
};

fn signal(hookd: &Hookd, name: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(hookd.pid().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} was delivered");
}

fn assert_clean_exit(hookd: &mut Hookd, status: Option<ExitStatus>, what: &str) {
    let log = hookd.stderr();
    let status = status.unwrap_or_else(|| panic!("{what}: hookd did not exit within 10 s:\n{log}"));
    assert!(!log.contains("panicked"), "{what}: hookd panicked:\n{log}");
    assert_eq!(
        status.code(),
        Some(0),
        "{what}: exit status {status}:\n{log}"
    );
}

on_both_backends!(
    a_signal_stops_serve_with_exit_status_zero_and_no_panic,
    |backend: Backend| async move {
        let (url, _db) = harness::database(backend).await;
        let work = tempfile::tempdir().expect("a working folder");
        let http = awc::Client::default();
        for signal_name in ["TERM", "INT"] {
            let listen = format!("127.0.0.1:{}", free_port());
            let env = harness::test_env(&url, &[("HOOKD_HTTP__LISTEN", &listen)]);
            let mut hookd = Hookd::start(&["serve"], &env, work.path(), signal_name);
            hookd
                .wait_healthy(&http, &format!("http://{listen}"), Duration::from_secs(30))
                .await;
            signal(&hookd, signal_name);
            let status = hookd.wait_exit(Duration::from_secs(10));
            assert_clean_exit(&mut hookd, status, &format!("SIG{signal_name}"));
        }
    }
);

on_both_backends!(
    a_taken_port_stops_the_start_with_an_error_and_no_panic,
    |backend: Backend| async move {
        let (url, _db) = harness::database(backend).await;
        let work = tempfile::tempdir().expect("a working folder");
        let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port to take");
        let listen = taken.local_addr().expect("its address").to_string();
        let env = harness::test_env(&url, &[("HOOKD_HTTP__LISTEN", &listen)]);
        let mut hookd = Hookd::start(&["serve"], &env, work.path(), "taken");
        let status = hookd
            .wait_exit(Duration::from_secs(20))
            .expect("hookd gives up on a taken port");
        let log = hookd.stderr();
        assert!(!log.contains("panicked"), "hookd panicked:\n{log}");
        assert_eq!(status.code(), Some(1), "{log}");
        assert!(
            log.contains("cannot listen on") && log.contains("http.listen"),
            "the error names the address and the setting:\n{log}"
        );
    }
);
