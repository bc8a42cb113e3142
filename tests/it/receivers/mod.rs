//! The example receivers (`examples/receivers/`) as child processes against a
//! live hookd: every scenario in `scenarios.rs` runs, on the bed `bed.rs`
//! sets up, for each receiver that a [`ReceiverUnderTest`] describes
//! (`python.rs`, `typescript.rs`, `go.rs`, `rust.rs`: one per language;
//! `mutants.rs` proves the scenarios can fail; `documented.rs` sends the
//! events the docs show).
//!
//! Every example receiver keeps one contract, so one harness drives them all
//! (`examples/receivers/README.md` says the same for their authors):
//! - configured by the environment: `HOST`, `PORT`, `WEBHOOK_SECRETS` (one or
//!   more `whsec_…`, space-separated), `INBOX_DB`, a SQLite file it creates,
//!   and `CATALOG_DIR`, the catalog whose schemas `data` is validated against
//!   (422 and nothing stored when it does not match);
//! - takes events at `POST /webhooks`, listening once the inbox is ready;
//! - its SQLite file has `inbox(webhook_id UNIQUE, event_type, status,
//!   received_count)` with the statuses `pending`, `applied`, `stale`,
//!   `ignored`, `test` and `failed`; `subjects(subject_type, subject_id,
//!   version, event_id)`, the newest state applied per subject; and
//!   `ledger(kind, source_id, event_id)`, money facts booked once per source.
//!
//! The harness reads that file itself (the durable truth, not what the
//! receiver says about it), and makes the receiver fail by holding SQLite's
//! write lock: a receiver that cannot store must answer 5xx, not 2xx. A
//! receiver whose inbox is not SQLite would add a [`State`] variant.

mod bed;
pub mod documented;
mod durability;
pub mod go;
mod mutants;
pub mod python;
pub mod rust;
mod scenarios;
pub mod typescript;

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::OnceLock,
    time::{Duration, Instant},
};

use hookd::secret::Secret;
use sea_orm::sqlx::{
    self, ConnectOptions as _, Connection as _,
    sqlite::{SqliteConnectOptions, SqliteConnection, SqliteRow},
};

use crate::harness::process::free_port;

/// How long a receiver may take to listen, and an event to be applied.
use crate::harness::SLOW;

/// One example receiver, as the harness starts and reads it.
pub struct ReceiverUnderTest {
    /// For messages: "the Python receiver".
    pub name: &'static str,
    /// Makes the toolchain ready (once per process) and says how to start the
    /// receiver, or what is missing.
    pub toolchain: fn() -> Toolchain,
    /// Where its inbox and applied state live.
    pub state: State,
}

impl ReceiverUnderTest {
    /// A receiver whose state is a SQLite file ([`State::Sqlite`]).
    pub const fn sqlite(name: &'static str, toolchain: fn() -> Toolchain) -> ReceiverUnderTest {
        ReceiverUnderTest {
            name,
            toolchain,
            state: State::Sqlite,
        }
    }
}

/// `examples/receivers/<language>`.
pub fn example_dir(language: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/receivers")
        .join(language)
}

#[derive(Clone, Copy)]
pub enum State {
    /// The SQLite file at `INBOX_DB`, with the tables the module doc names.
    Sqlite,
}

#[derive(Clone, Debug)]
pub enum Toolchain {
    Ready {
        program: PathBuf,
        args: Vec<String>,
        /// Added to the contract's variables (and `PATH`); nothing else is inherited.
        env: Vec<(String, String)>,
    },
    /// What is missing and how to install it.
    Missing(String),
}

impl Toolchain {
    /// What `set_up` makes ready, set up once per test process (and kept in
    /// `cell`); its `Err` says what is missing.
    pub fn once(
        cell: &'static OnceLock<Toolchain>,
        set_up: impl FnOnce() -> Result<Toolchain, String>,
    ) -> Toolchain {
        cell.get_or_init(|| set_up().unwrap_or_else(Toolchain::Missing))
            .clone()
    }

    /// `program` with no arguments and no variables of its own.
    pub fn program(program: PathBuf) -> Toolchain {
        Toolchain::Ready {
            program,
            args: vec![],
            env: vec![],
        }
    }
}

/// The receiver's toolchain, or `None` after saying loudly why the test is
/// skipped. Under `CI=true` a missing toolchain fails the test instead.
pub fn ready(spec: &ReceiverUnderTest) -> Option<Toolchain> {
    match (spec.toolchain)() {
        Toolchain::Missing(why) => {
            crate::harness::skip::skipping(spec.name, &why);
            None
        }
        ready => Some(ready),
    }
}

#[derive(Debug, Clone)]
pub struct InboxRow {
    pub webhook_id: String,
    pub event_type: String,
    pub status: String,
    pub received_count: i64,
}

#[derive(Debug, Clone)]
pub struct SubjectRow {
    pub subject_type: String,
    pub subject_id: String,
    pub version: Option<i64>,
    pub event_id: String,
}

#[derive(Debug, Clone)]
pub struct LedgerRow {
    pub kind: String,
    pub source_id: String,
    pub event_id: String,
}

/// What the receiver has stored and applied, read from its inbox.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub inbox: Vec<InboxRow>,
    pub subjects: Vec<SubjectRow>,
    pub ledger: Vec<LedgerRow>,
}

impl Snapshot {
    /// The inbox rows of `webhook_id` (one, or none; two would be a bug).
    pub fn received(&self, webhook_id: &str) -> Vec<&InboxRow> {
        self.inbox
            .iter()
            .filter(|r| r.webhook_id == webhook_id)
            .collect()
    }

    pub fn subject(&self, subject_type: &str, id: &str) -> Option<&SubjectRow> {
        self.subjects
            .iter()
            .find(|s| s.subject_type == subject_type && s.subject_id == id)
    }

    pub fn booked(&self, kind: &str, source_id: &str) -> Vec<&LedgerRow> {
        self.ledger
            .iter()
            .filter(|l| l.kind == kind && l.source_id == source_id)
            .collect()
    }
}

/// A receiver on a free loopback port with its own temp inbox; started with
/// the secrets it is given, killed when dropped.
pub struct Receiver {
    name: &'static str,
    state: State,
    toolchain: Toolchain,
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Receiver {
    /// A receiver not yet started (its URL is known, so an endpoint can point
    /// at it first); `None` when its toolchain is missing (see [`ready`]).
    pub fn new(spec: &ReceiverUnderTest) -> Option<Receiver> {
        Some(Receiver {
            name: spec.name,
            state: spec.state,
            toolchain: ready(spec)?,
            port: free_port(),
            dir: tempfile::tempdir().expect("a temp dir for the receiver"),
            child: None,
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/webhooks", self.port)
    }

    pub fn inbox_path(&self) -> PathBuf {
        self.dir.path().join("inbox.db")
    }

    pub fn toolchain(&self) -> &Toolchain {
        &self.toolchain
    }

    fn stderr_path(&self) -> PathBuf {
        self.dir.path().join("receiver.stderr")
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr_path()).unwrap_or_default()
    }

    /// Starts it with `secrets` (stopping it first if it runs; the inbox
    /// stays) and waits until it accepts connections.
    pub async fn start(&mut self, secrets: &[&Secret]) {
        self.stop();
        let Toolchain::Ready { program, args, env } = &self.toolchain else {
            unreachable!("a receiver is only made with a ready toolchain")
        };
        let secrets: Vec<String> = secrets.iter().map(|s| s.expose()).collect();
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.stderr_path())
            .expect("a file for the receiver's stderr");
        let child = Command::new(program)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("HOST", "127.0.0.1")
            .env("PORT", self.port.to_string())
            .env("WEBHOOK_SECRETS", secrets.join(" "))
            .env("INBOX_DB", self.inbox_path())
            .env(
                "CATALOG_DIR",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("config/catalog"),
            )
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("{} starts ({program:?}): {e}", self.name));
        self.child = Some(child);
        let deadline = Instant::now() + SLOW;
        loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!(
                    "{} exited ({status}) before it listened; stderr:\n{}",
                    self.name,
                    self.stderr()
                );
            }
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not listen on port {} within {SLOW:?}; stderr:\n{}",
                self.name,
                self.port,
                self.stderr()
            );
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGKILL: what it stored must survive this.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    async fn open(&self) -> SqliteConnection {
        let State::Sqlite = self.state;
        SqliteConnectOptions::new()
            .filename(self.inbox_path())
            .busy_timeout(Duration::from_secs(5))
            .connect()
            .await
            .unwrap_or_else(|e| panic!("the {} inbox opens: {e}", self.name))
    }

    /// Everything the receiver stored and applied, as of now.
    pub async fn snapshot(&self) -> Snapshot {
        let mut conn = self.open().await;
        let sql = "SELECT webhook_id, event_type, status, received_count FROM inbox";
        let inbox = all(&mut conn, sql).await.into_iter();
        let sql = "SELECT subject_type, subject_id, version, event_id FROM subjects";
        let subjects = all(&mut conn, sql).await.into_iter();
        let ledger = all(&mut conn, "SELECT kind, source_id, event_id FROM ledger").await;
        conn.close().await.expect("the inbox closes");
        Snapshot {
            inbox: inbox
                .map(
                    |(webhook_id, event_type, status, received_count)| InboxRow {
                        webhook_id,
                        event_type,
                        status,
                        received_count,
                    },
                )
                .collect(),
            subjects: subjects
                .map(|(subject_type, subject_id, version, event_id)| SubjectRow {
                    subject_type,
                    subject_id,
                    version,
                    event_id,
                })
                .collect(),
            ledger: ledger
                .into_iter()
                .map(|(kind, source_id, event_id)| LedgerRow {
                    kind,
                    source_id,
                    event_id,
                })
                .collect(),
        }
    }

    /// Waits until the event is stored and no longer pending; returns its row.
    pub async fn processed(&self, webhook_id: &str) -> InboxRow {
        let deadline = Instant::now() + SLOW;
        loop {
            let snapshot = self.snapshot().await;
            if let [row] = snapshot.received(webhook_id)[..]
                && row.status != "pending"
            {
                return row.clone();
            }
            assert!(
                Instant::now() < deadline,
                "{} did not process {webhook_id} within {SLOW:?}: {snapshot:#?}\nstderr:\n{}",
                self.name,
                self.stderr()
            );
            actix_rt::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Takes the inbox's write lock until the hold is released: meanwhile the
    /// receiver cannot store anything.
    pub async fn hold_inbox(&self) -> InboxHold {
        let mut conn = self.open().await;
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut conn)
            .await
            .expect("the harness takes the inbox's write lock");
        InboxHold { conn }
    }

    /// POSTs `body` with `headers` straight to the receiver (no hookd):
    /// the status and the answer's text.
    pub async fn post(
        &self,
        http: &awc::Client,
        headers: &[(&str, String)],
        body: &[u8],
    ) -> (u16, String) {
        let mut req = http
            .post(self.url())
            .insert_header(("content-type", "application/json"));
        for (name, value) in headers {
            req = req.insert_header((*name, value.as_str()));
        }
        let mut res = req
            .send_body(body.to_vec())
            .await
            .unwrap_or_else(|e| panic!("{} answers: {e}", self.name));
        let text = res.body().await.expect("an answer body");
        (
            res.status().as_u16(),
            String::from_utf8_lossy(&text).into_owned(),
        )
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Every row `sql` selects from the receiver's inbox file.
async fn all<T>(conn: &mut SqliteConnection, sql: &'static str) -> Vec<T>
where
    T: for<'r> sqlx::FromRow<'r, SqliteRow> + Send + Unpin,
{
    sqlx::query_as(sql)
        .fetch_all(conn)
        .await
        .unwrap_or_else(|e| panic!("`{sql}` reads the receiver's inbox: {e}"))
}

/// The inbox's write lock, held by the harness.
pub struct InboxHold {
    conn: SqliteConnection,
}

impl InboxHold {
    pub async fn release(mut self) {
        sqlx::query("ROLLBACK")
            .execute(&mut self.conn)
            .await
            .expect("the harness releases the inbox");
        self.conn.close().await.expect("the hold closes");
    }
}
