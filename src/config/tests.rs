//! The configuration's loading and validation, key by key.

use super::*;

mod reference_table;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
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
fn egress_proxy_is_off_when_empty_and_refused_by_key_without_its_password() {
    let c = Config::load(None, env(&[])).expect("the defaults load");
    assert_eq!(c.egress.proxy, None);
    let c = Config::load(
        None,
        env(&[(
            "HOOKD_EGRESS__PROXY",
            "http://hookd:hunter2@proxy.internal:3128",
        )]),
    )
    .expect("a proxy URL with credentials loads");
    let proxy = c.egress.proxy.clone().expect("the proxy");
    assert_eq!(proxy.to_string(), "http://proxy.internal:3128");
    assert!(!format!("{:?}", c.egress).contains("hunter2"));
    let err = Config::load(
        None,
        env(&[(
            "HOOKD_EGRESS__PROXY",
            "https://hookd:hunter2@proxy.internal:3128",
        )]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("egress.proxy") && err.contains("http://"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
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
        sqlite_synchronous: crate::config::SqliteSynchronous::Full,
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

/// Each table the raw types read, asked for its fields the way serde refuses
/// an unknown one: the known keys must be exactly those, at every level.
#[test]
fn the_known_keys_are_exactly_what_the_types_accept() {
    use figment::{
        Figment,
        error::Kind,
        providers::{Format, Serialized, Toml},
    };
    let keys = load::known_keys();
    let mut tables = vec![String::new()];
    tables.extend(
        keys.leaves()
            .filter_map(|k| k.rsplit_once('.').map(|(s, _)| s.to_string())),
    );
    tables.dedup();
    for table in tables {
        let probe = if table.is_empty() {
            "zz_probe".to_string()
        } else {
            format!("{table}.zz_probe")
        };
        let err = Figment::from(Toml::string(DEFAULT_TOML))
            .merge(Serialized::default(&probe, 1))
            .extract::<Raw>()
            .expect_err("an unknown field is refused");
        let Kind::UnknownField(_, expected) = err.kind else {
            panic!("`{probe}`: not an unknown-field error: {err}")
        };
        let mut expected: Vec<String> = expected
            .iter()
            .map(|f| {
                if table.is_empty() {
                    f.to_string()
                } else {
                    format!("{table}.{f}")
                }
            })
            .collect();
        expected.sort();
        let mut known: Vec<String> = keys.children(&table).map(String::from).collect();
        known.sort();
        assert_eq!(
            known, expected,
            "the keys of `{table}` differ from what its type reads"
        );
    }
    assert!(
        keys.leaves().any(|k| k == "delivery.max_connections"),
        "an optional key unset in config/default.toml is still known"
    );
}

fn message(file: Option<&str>, vars: &[(&str, &str)]) -> (String, PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir").keep();
    let path = dir.join("hookd.toml");
    if let Some(text) = file {
        std::fs::write(&path, text).expect("the file is written");
    }
    let err = Config::load(file.map(|_| path.as_path()), env(vars)).expect_err("refused");
    let _ = std::fs::remove_dir_all(&dir);
    (err.to_string(), path)
}

#[test]
fn the_environment_wins_and_is_named_over_the_file() {
    let (msg, _) = message(
        Some("[ingest]\nmax_batch = 7\n"),
        &[("HOOKD_INGEST__MAX_BATCH", "0")],
    );
    assert_eq!(
        msg,
        "configuration: `ingest.max_batch` from HOOKD_INGEST__MAX_BATCH: must be between 1 and 10000 (got 0)"
    );
    let (msg, path) = message(Some("[ingest]\nmax_batch = 0\n"), &[]);
    assert!(
        msg.contains(&format!("from {}, line 2:", path.display())),
        "a file's value names the file and line: {msg}"
    );
}

#[test]
fn a_value_from_the_defaults_says_so() {
    let (msg, _) = message(Some("[api]\npage_size_max = 10\n"), &[]);
    assert_eq!(
        msg,
        "configuration: `api.page_size_default` from the defaults: \
         must be between 1 and api.page_size_max, 10 (got 50)"
    );
}

#[test]
fn every_unknown_key_and_variable_is_reported_at_once() {
    let (msg, path) = message(
        Some("[http]\nlistn = \"0.0.0.0:80\"\n[htpp]\nlisten = \"x\"\n"),
        &[
            ("HOOKD_EGRESS_ALLOW_HTTP", "true"),
            ("HOOKD_DELIVERY__RETRIES", "3"),
        ],
    );
    let file = path.display();
    assert_eq!(
        msg,
        format!(
            "configuration: 4 problems\n  \
             - {file}, line 2: unknown key `http.listn`; did you mean `http.listen` (`HOOKD_HTTP__LISTEN`)?\n  \
             - {file}, line 3: unknown key `htpp`; did you mean the section `[http]`?\n  \
             - HOOKD_DELIVERY__RETRIES names no configuration key (it would be `delivery.retries`); \
             every key is listed, with its default, in config/default.toml\n  \
             - HOOKD_EGRESS_ALLOW_HTTP names no configuration key: a section and its key are joined by a \
             double underscore, HOOKD_<SECTION>__<KEY>; did you mean `egress.allow_http` (`HOOKD_EGRESS__ALLOW_HTTP`)?"
        )
    );
}

#[test]
fn a_variable_naming_a_section_lists_its_keys() {
    let (msg, _) = message(None, &[("HOOKD_LOG", "debug")]);
    assert_eq!(
        msg,
        "configuration: HOOKD_LOG names the section `log`, not a key; set one of its keys: \
         `log.filter` (`HOOKD_LOG__FILTER`), `log.format` (`HOOKD_LOG__FORMAT`)"
    );
}

#[test]
fn a_value_where_a_section_belongs_says_a_section_was_expected() {
    let (msg, path) = message(Some("log = \"debug\"\n"), &[]);
    assert_eq!(
        msg,
        format!(
            "configuration: `log` from {}, line 1: expected a section of keys; got the text \"debug\"",
            path.display()
        )
    );
}

#[test]
fn secrets_and_urls_are_not_echoed_in_a_type_error() {
    let (msg, _) = message(Some("[secrets]\nmaster_key = 123456789\n"), &[]);
    assert!(
        msg.contains("`secrets.master_key`") && msg.contains("got a number"),
        "{msg}"
    );
    assert!(!msg.contains("123456789"), "the secret is echoed: {msg}");
    let (msg, _) = message(
        Some("[database]\nurl = [\"postgres://u:hunter2@h/db\"]\n"),
        &[],
    );
    assert!(!msg.contains("hunter2"), "the password is echoed: {msg}");
}

#[test]
fn a_missing_or_broken_file_is_named() {
    let missing = PathBuf::from("/nonexistent/hookd.toml");
    let err = Config::load(Some(&missing), env(&[])).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "configuration: /nonexistent/hookd.toml: no such file"
    );
    let (msg, path) = message(Some("[http]\nlisten = \n"), &[]);
    assert!(
        msg.starts_with(&format!(
            "configuration: {}: not valid TOML, at line 2, column 10",
            path.display()
        )),
        "{msg}"
    );
}

#[test]
fn the_variables_of_other_tools_do_not_stop_the_start() {
    Config::load(
        None,
        env(&[
            ("HOOKD_TEST_PG", "skip"),
            ("HOOKD_TEST_BROWSER", "skip"),
            ("HOOKD_SCREENSHOTS", "1"),
            ("HOOKD_BIN", "/usr/bin/hookd"),
            ("HOOKD_URL", "http://127.0.0.1:8080"),
            ("HOOKD_PARTNER_KEY", "hk_x"),
            ("HOOKD_CI_ACCEPTED_URL", "x"),
        ]),
    )
    .expect("tolerated variables are not configuration");
}

#[test]
fn payload_patterns_and_allowances_are_checked_at_start_and_name_their_entry() {
    for (key, value, named) in [
        (
            "HOOKD_PAYLOAD__PATTERNS",
            r#"["internal-key:ik_[a-z"]"#,
            "payload.patterns[0]",
        ),
        (
            "HOOKD_PAYLOAD__PATTERNS",
            r#"["no colon here"]"#,
            "payload.patterns[0]",
        ),
        (
            "HOOKD_PAYLOAD__PATTERNS",
            r#"["Internal Key:ik_"]"#,
            "payload.patterns[0]",
        ),
        (
            "HOOKD_PAYLOAD__PATTERNS",
            r#"["json-web-token:x"]"#,
            "payload.patterns[0]",
        ),
        (
            "HOOKD_PAYLOAD__ALLOW",
            r#"["balance.updated:/data/x", "balance.updated"]"#,
            "payload.allow[1]",
        ),
        (
            "HOOKD_PAYLOAD__ALLOW",
            r#"["balance.updated:/subject/id"]"#,
            "payload.allow[0]",
        ),
    ] {
        let err = Config::load(None, env(&[(key, value)])).expect_err(value);
        assert!(err.to_string().contains(named), "{value}: {err}");
    }
}

#[test]
fn payload_patterns_and_allowances_that_parse_reach_the_screen() {
    let c = Config::load(
        None,
        env(&[
            (
                "HOOKD_PAYLOAD__PATTERNS",
                r#"["internal-key:\\bik_[a-z0-9]{12}\\b"]"#,
            ),
            ("HOOKD_PAYLOAD__ALLOW", r#"["a.b:/data/fixture"]"#),
        ]),
    )
    .expect("valid payload settings load");
    let data = serde_json::json!({"note": "ik_0a1b2c3d4e5f", "fixture": "ik_0a1b2c3d4e5f"});
    let found = c.payload.screen.screen("a.b", &data);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].pointer.as_str(), found[0].rule.as_str()),
        ("/note", "internal-key")
    );
    let off = Config::load(None, env(&[("HOOKD_PAYLOAD__SECRET_SCREEN", "false")])).expect("loads");
    assert_eq!(off.payload.screen.screen("a.b", &data), []);
}
