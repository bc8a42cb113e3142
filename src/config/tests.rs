//! The configuration's loading and validation, key by key.

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_documented_defaults_are_valid() {
    let c = Config::defaults();
    assert_eq!(c.http.listen.to_string(), "127.0.0.1:8080");
    assert!(c.database.is_sqlite());
    assert_eq!(c.delivery.schedule.len(), 10);
    assert_eq!(c.delivery.schedule[2], Duration::from_secs(300));
}

#[test]
fn environment_variables_override_keys_and_parse_toml_lists() {
    let c = Config::load(
        None,
        env(&[
            ("HOOKD_DATABASE__URL", "postgres://u@h/db"),
            ("HOOKD_EGRESS__ALLOW_HTTP", "true"),
            ("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.0/8", "::1"]"#),
            ("HOOKD_TEST_PG", "skip"),
            ("PATH", "/bin"),
        ]),
    )
    .expect("valid overrides should load");
    assert_eq!(c.database.url, "postgres://u@h/db");
    assert!(c.egress.allow_http);
    assert_eq!(c.egress.allow_cidrs.len(), 2);
}

#[test]
fn an_unknown_key_stops_the_start_and_names_it() {
    let err = Config::load(None, env(&[("HOOKD_EGRESS__ALLOW_HTTPS", "true")])).unwrap_err();
    assert!(
        err.to_string().contains("allow_https"),
        "message should name the key: {err}"
    );
}

#[test]
fn an_invalid_value_names_its_key() {
    let err = Config::load(None, env(&[("HOOKD_DELIVERY__MAX_AGE", "four days")])).unwrap_err();
    assert!(err.to_string().contains("delivery.max_age"), "{err}");
    let err = Config::load(None, env(&[("HOOKD_SECRETS__MASTER_KEY", "short")])).unwrap_err();
    assert!(err.to_string().contains("secrets.master_key"), "{err}");
    let err = Config::load(
        None,
        env(&[("HOOKD_EGRESS__ALLOW_CIDRS", r#"["10.0.0.0/33"]"#)]),
    )
    .unwrap_err();
    assert!(err.to_string().contains("egress.allow_cidrs"), "{err}");
    let err = Config::load(None, env(&[("HOOKD_HTTP__LISTEN", "nowhere")])).unwrap_err();
    assert!(err.to_string().contains("http.listen"), "{err}");
    let err =
        Config::load(None, env(&[("HOOKD_API__SERVICE_RATE_LIMIT_BURST", "10")])).unwrap_err();
    assert!(
        err.to_string().contains("api.service_rate_limit_burst"),
        "a burst below the rate names its key: {err}"
    );
}

#[test]
fn durations_read_like_people_write_them() {
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
    assert_eq!(parse_duration("3d"), Ok(Duration::from_secs(259_200)));
    assert!(parse_duration("5 parsecs").is_err());
    assert!(parse_duration("").is_err());
}

#[test]
fn the_sqlite_file_is_found_in_the_url() {
    let db = |url: &str| DatabaseConfig {
        url: url.into(),
        max_connections: 1,
        acquire_timeout: Duration::from_secs(1),
    };
    assert_eq!(
        db("sqlite://hookd.db").sqlite_path(),
        Some(PathBuf::from("hookd.db"))
    );
    assert_eq!(
        db("sqlite:///tmp/x.db?mode=rwc").sqlite_path(),
        Some(PathBuf::from("/tmp/x.db"))
    );
    assert_eq!(db("postgres://x/y").sqlite_path(), None);
}

#[test]
fn the_health_sweep_interval_defaults_to_a_minute_and_must_be_positive() {
    assert_eq!(
        Config::defaults().endpoints.health_interval,
        Duration::from_secs(60)
    );
    let c = Config::load(None, env(&[("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "5s")]))
        .expect("an override loads");
    assert_eq!(c.endpoints.health_interval, Duration::from_secs(5));
    let err = Config::load(None, env(&[("HOOKD_ENDPOINTS__HEALTH_INTERVAL", "0s")])).unwrap_err();
    assert!(
        err.to_string().contains("endpoints.health_interval"),
        "a zero interval names its key: {err}"
    );
}
