//! The shared harness: each test gets hookd on a random port over a fresh,
//! migrated database (SQLite in a temp dir, or a database on the private
//! PostgreSQL cluster), a manual clock, a service key and a partner.

pub mod answer;
pub mod browser;
pub mod browser_app;
pub mod bulk;
pub mod dns;
pub mod limits;
pub mod otlp;
pub mod outcome;
pub mod payloads;
pub mod pg;
pub mod ports;
pub mod process;
pub mod python;
pub mod receiver;
pub mod rows;
pub mod schedule;
pub mod send;
pub mod serve;
pub mod sets;
pub mod signatures;
pub mod skip;
pub mod slow_answer;
pub mod small_disk;
pub mod smtp;
pub mod system;
pub mod tcp_proxy;
pub mod tinyproxy;
pub mod tls;
pub mod toolchain;
pub mod wait;

pub use answer::{ApiAnswer, TextAnswer, expect_status, read_answer, read_text};
pub use limits::{Limited, UNLIMITED, rate_limit};
pub use send::call_raw;
pub use system::{quiesce, run};
pub use wait::{
    QUIET, READY_ANSWER_WITHIN, SLOW, WAIT, stays_quiet, until_none, wait_for, wait_until,
};

use std::{
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use hookd::{
    app::{self, Running},
    config::Config,
    domain::clock::{Clock as _, ManualClock},
    secret::Secret,
    store::{
        self,
        endpoints::{EndpointStatus, NewEndpoint},
        keys::Role,
    },
};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub const MASTER_KEY: &str = "test-master-key-0123456789-abcdefghij";

/// Runs a test body on SQLite and on PostgreSQL, as two tests. The body is
/// either `|app: TestApp| async move { … }`, given an app spawned with the
/// defaults, or `|backend: Backend| async move { … }`, which starts its own.
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident, |$app:ident : TestApp| async move $block:block) => {
        $crate::on_both_backends!($name, |backend: $crate::harness::Backend| async move {
            let $app = $crate::harness::spawn_app(backend).await;
            $block
        });
    };
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[hookd_test_macros::test]
            async fn sqlite() {
                ($body)($crate::harness::Backend::Sqlite).await;
            }
            #[hookd_test_macros::test]
            async fn postgres() {
                if $crate::harness::skip_postgres() {
                    return;
                }
                ($body)($crate::harness::Backend::Postgres).await;
            }
        }
    };
}

/// Locks `mutex` even if a panic poisoned it: for the harness's servers,
/// whose state a panic while holding the lock cannot leave inconsistent.
pub fn lock_through_poison<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `HOOKD_TEST_PG=skip` skips the PostgreSQL variants, loudly; under
/// `CI=true` it fails them instead.
pub fn skip_postgres() -> bool {
    std::env::var("HOOKD_TEST_PG").is_ok_and(|v| v == "skip")
        && skip::skipping("the PostgreSQL variant", "HOOKD_TEST_PG=skip")
}

/// A database URL for the backend, with whatever keeps it alive.
pub async fn database(backend: Backend) -> (String, Option<tempfile::TempDir>) {
    match backend {
        Backend::Sqlite => {
            let dir = tempfile::tempdir().expect("a temp dir for the SQLite file");
            (
                format!("sqlite://{}/hookd.db", dir.path().display()),
                Some(dir),
            )
        }
        Backend::Postgres => match pg::fresh_database().await {
            Ok(url) => (url, None),
            Err(e) => panic!("{e}"),
        },
    }
}

/// The test configuration: loopback over plain http allowed, short timeouts,
/// a fast poll. `extra` overrides keys like the environment would.
pub fn test_env(url: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = [
        ("HOOKD_DATABASE__URL", url),
        ("HOOKD_DATABASE__MAX_CONNECTIONS", "4"),
        ("HOOKD_SECRETS__MASTER_KEY", MASTER_KEY),
        ("HOOKD_HTTP__LISTEN", "127.0.0.1:0"),
        ("HOOKD_EGRESS__ALLOW_HTTP", "true"),
        ("HOOKD_EGRESS__ALLOW_CIDRS", r#"["127.0.0.0/8"]"#),
        ("HOOKD_EGRESS__ALLOWED_PORTS", "[]"),
        ("HOOKD_DELIVERY__POLL_INTERVAL", "50ms"),
        ("HOOKD_DELIVERY__CONNECT_TIMEOUT", "1s"),
        ("HOOKD_DELIVERY__REQUEST_TIMEOUT", "2s"),
        ("HOOKD_DELIVERY__LEASE", "5s"),
        // Delivery tests publish made-up types (`a.b`); known types are still
        // checked, and the contract tests (tests/it/contract/) set it back.
        ("HOOKD_CATALOG__STRICT", "false"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

pub struct TestApp {
    pub running: Running,
    pub clock: ManualClock,
    pub base_url: String,
    pub service_key: String,
    pub partner_id: String,
    pub http: awc::Client,
    _dir: Option<tempfile::TempDir>,
}

pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, &[]).await
}

pub async fn spawn_app_with(backend: Backend, extra: &[(&str, &str)]) -> TestApp {
    let (url, dir) = database(backend).await;
    let config =
        Config::load(None, test_env(&url, extra)).expect("the test configuration is valid");
    let clock = ManualClock::starting_at(chrono::Utc::now());
    let running = app::start(config, Arc::new(clock.clone()), false)
        .await
        .expect("hookd starts");
    system::started(&running.engine);
    let db = &running.shared.db;
    let now = clock.now_ms();
    let partner = store::partners::create(db, None, "Acme", now)
        .await
        .expect("a partner");
    let key = store::keys::create(db, Role::Service, None, now)
        .await
        .expect("a service key");
    running
        .known_keys
        .refresh()
        .await
        .expect("the front door reads the keys");
    TestApp {
        base_url: format!("http://{}", running.addr),
        running,
        clock,
        service_key: key.key,
        partner_id: partner.id,
        http: awc::Client::builder()
            .timeout(Duration::from_secs(30))
            .finish(),
        _dir: dir,
    }
}

impl TestApp {
    pub fn db(&self) -> &sea_orm::DatabaseConnection {
        &self.running.shared.db
    }

    /// Registers an endpoint for the test partner, straight in the store.
    pub async fn endpoint(&self, url: &str) -> (String, Secret) {
        self.endpoint_for(&self.partner_id, url, &[], 8).await
    }

    pub async fn endpoint_for(
        &self,
        partner: &str,
        url: &str,
        types: &[&str],
        concurrency: u32,
    ) -> (String, Secret) {
        let new = NewEndpoint {
            partner_id: partner.into(),
            url: url.into(),
            description: String::new(),
            event_types: types.iter().map(|t| t.to_string()).collect(),
            concurrency,
            rate_limit: None,
            schema_version: None,
            schema_versions: Default::default(),
            status: EndpointStatus::Active,
            ordering: Default::default(),
            on_dead: Default::default(),
            filter: None,
        };
        let (e, key) = store::endpoints::create(
            self.db(),
            &self.running.shared.secrets,
            new,
            hookd::signing::Scheme::V1,
            self.clock.now_ms(),
        )
        .await
        .expect("an endpoint");
        let hookd::signing::SigningKey::Hmac(secret) = key else {
            unreachable!("a v1 key is an HMAC secret")
        };
        (e.id, secret)
    }

    /// POSTs JSON to `/v1/events` with `key`; returns status and body.
    pub async fn post_events_with(&self, key: Option<&str>, body: &str) -> (u16, Value, String) {
        let mut req = self
            .http
            .post(format!("{}/v1/events", self.base_url))
            .insert_header(("content-type", "application/json"));
        if let Some(key) = key {
            req = req.insert_header(("authorization", format!("Bearer {key}")));
        }
        let sent = req.send_body(body.to_string()).await;
        let (status, value, headers) =
            read_answer(sent.expect("the ingest request completes")).await;
        let content_type = answer::header(&headers, "content-type")
            .unwrap_or("")
            .to_string();
        (status, value, content_type)
    }

    pub async fn post_events(&self, body: &Value) -> (u16, Value) {
        let (status, value, _) = self
            .post_events_with(Some(&self.service_key), &body.to_string())
            .await;
        (status, value)
    }

    /// Publishes one event for the test partner and returns its id.
    pub async fn publish(&self, event_type: &str, data: Value) -> String {
        let (status, body) =
            self.post_events(&serde_json::json!({"type": event_type, "partner_id": self.partner_id, "data": data})).await;
        assert_eq!(status, 201, "publishing should be accepted: {body}");
        body["event_id"].as_str().expect("an event id").to_string()
    }

    /// The value of `name` in a `GET /metrics` scrape, with an operator key.
    pub async fn metric(&self, operator: &str, name: &str) -> i64 {
        let text = self.scrape(operator).await;
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("the scrape has no `{name}`:\n{text}"))
    }

    /// `GET /metrics` with the operator's key: the text.
    pub async fn scrape(&self, operator: &str) -> String {
        let url = format!("{}/metrics", self.base_url);
        let sent = self.http.get(url).bearer_auth(operator).send().await;
        let mut res = sent.expect("the scrape completes");
        let body = res.body().await.expect("a scrape body");
        assert_eq!(
            res.status(),
            200,
            "the scrape: {}",
            String::from_utf8_lossy(&body)
        );
        String::from_utf8_lossy(&body).into_owned()
    }

    /// Moves the manual clock; the engine's poll notices within 50 ms.
    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// Counts rows with a raw SQL query returning one `n` column.
    pub async fn count(&self, sql: &str) -> i64 {
        use sea_orm::ConnectionTrait;
        let backend = self.db().get_database_backend();
        let row = self
            .db()
            .query_one_raw(sea_orm::Statement::from_string(backend, sql))
            .await
            .expect("the count query runs")
            .expect("a row");
        row.try_get::<i64>("", "n").expect("an n column")
    }

    /// The delivery row of `event_id` to `endpoint_id`, if there is one.
    pub async fn delivery_row_opt(
        &self,
        event_id: &str,
        endpoint_id: &str,
    ) -> Option<store::entity::delivery::Model> {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        use store::entity::delivery;
        delivery::Entity::find()
            .filter(delivery::Column::EventId.eq(event_id))
            .filter(delivery::Column::EndpointId.eq(endpoint_id))
            .one(self.db())
            .await
            .expect("the delivery query runs")
    }

    /// The delivery row of `event_id` to `endpoint_id`, which must exist.
    pub async fn delivery_row(
        &self,
        event_id: &str,
        endpoint_id: &str,
    ) -> store::entity::delivery::Model {
        self.delivery_row_opt(event_id, endpoint_id)
            .await
            .unwrap_or_else(|| panic!("no delivery of {event_id} to {endpoint_id}"))
    }

    /// The delivery of `event_id` to `endpoint_id`: (state, attempt_count).
    pub async fn delivery(&self, event_id: &str, endpoint_id: &str) -> Option<(String, i32)> {
        let d = self.delivery_row_opt(event_id, endpoint_id).await?;
        Some((d.state, d.attempt_count))
    }

    /// The attempts of a delivery, in order (none while it does not exist).
    pub async fn attempts(
        &self,
        event_id: &str,
        endpoint_id: &str,
    ) -> Vec<store::entity::attempt::Model> {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
        use store::entity::attempt;
        let Some(d) = self.delivery_row_opt(event_id, endpoint_id).await else {
            return Vec::new();
        };
        attempt::Entity::find()
            .filter(attempt::Column::DeliveryId.eq(d.id))
            .order_by_asc(attempt::Column::AttemptNo)
            .all(self.db())
            .await
            .expect("the attempts query runs")
    }

    /// The attempts of a delivery once there are at least `n` (within `WAIT`).
    pub async fn attempts_when(
        &self,
        event_id: &str,
        endpoint_id: &str,
        n: usize,
    ) -> Vec<store::entity::attempt::Model> {
        let recorded = || async {
            let a = self.attempts(event_id, endpoint_id).await;
            (a.len() >= n).then_some(a)
        };
        wait_for(WAIT, recorded, || {
            format!("{n} attempts of {event_id} to {endpoint_id} were not recorded")
        })
        .await
    }

    /// Waits (polling the database, at most `timeout`) until the delivery is in `state`.
    pub async fn wait_for_state(
        &self,
        event_id: &str,
        endpoint_id: &str,
        state: &str,
        timeout: Duration,
    ) -> i32 {
        let reached = || async {
            match self.delivery(event_id, endpoint_id).await {
                Some((s, n)) if s == state => Some(n),
                _ => None,
            }
        };
        wait_for(timeout, reached, || {
            format!("delivery of {event_id} to {endpoint_id} did not reach `{state}`")
        })
        .await
    }
}

// ----- Partner API helpers -----

/// A second hookd on the same database (a second fanout and delivery
/// engine, and its own web server), stopped with the test's engines.
/// `extra` overrides configuration keys as for `spawn_app_with`.
pub async fn another_instance(app: &TestApp, extra: &[(&str, &str)]) -> Running {
    let url = app.running.shared.config.database.url.clone();
    let config =
        Config::load(None, test_env(&url, extra)).expect("the test configuration is valid");
    let running = app::start(config, Arc::new(app.clock.clone()), false)
        .await
        .expect("a second hookd starts");
    system::started(&running.engine);
    running
}

impl TestApp {
    /// A new key of `role` (for `partner`, if any), straight in the store,
    /// and known to the front door at once, as a key made through the API is.
    pub async fn key(&self, role: Role, partner: Option<&str>) -> store::keys::NewKey {
        let key = store::keys::create(self.db(), role, partner, self.clock.now_ms())
            .await
            .expect("a key");
        self.running
            .known_keys
            .refresh()
            .await
            .expect("the front door reads the keys");
        key
    }

    /// A partner key of the test partner.
    pub async fn partner_key(&self) -> String {
        self.key(Role::Partner, Some(&self.partner_id)).await.key
    }

    /// An operator key.
    pub async fn operator_key(&self) -> String {
        self.key(Role::Operator, None).await.key
    }

    /// Another partner with a key of its own: (partner id, key).
    pub async fn another_partner(&self, name: &str) -> (String, String) {
        let partner = store::partners::create(self.db(), None, name, self.clock.now_ms())
            .await
            .expect("a partner");
        let key = self.key(Role::Partner, Some(&partner.id)).await.key;
        (partner.id, key)
    }

    /// `method path` on this hookd with `key` and an optional JSON body.
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<&Value>,
    ) -> ApiAnswer {
        let text = body.map(Value::to_string);
        call_raw(
            &self.http,
            &self.base_url,
            method,
            path,
            key,
            text.as_deref(),
        )
        .await
    }

    /// Like `request`, with a body sent exactly as given (say, broken JSON).
    pub async fn request_raw(&self, method: &str, path: &str, key: &str, body: &str) -> ApiAnswer {
        call_raw(&self.http, &self.base_url, method, path, key, Some(body)).await
    }
}
