//! The delivery engine: the fanout actor turns outbox rows into deliveries and
//! supervises one endpoint actor per endpoint with work; endpoint actors send
//! through the pinned client; the recorder group-commits what happened; the
//! health sweep warns about and disables endpoints that fail for too long.

pub mod activity;
pub mod attempt;
pub mod behind;
pub mod budget;
pub mod client;
pub mod committer;
pub mod deadline;
pub mod due;
pub mod egress_audit;
pub mod endpoint;
pub mod excerpt;
pub mod fanout;
pub mod fenced_io;
pub mod fresh;
pub mod health_sweep;
pub mod incident_sweep;
pub mod lease_window;
pub mod log_limit;
pub mod mailer;
pub mod messages;
pub mod notify;
pub mod oauth2;
pub mod oldest_first;
pub mod oncall;
pub mod present;
pub mod proxy;
pub mod recorder;
pub mod report;
mod send_failure;
mod tcp_connect;
pub mod threads;
mod traced;

use std::sync::Arc;

use actix::prelude::*;
use sea_orm::DatabaseConnection;

use crate::{
    cluster::{
        actor::{ClusterActor, Node},
        leases::Leases,
        messages::Leave,
    },
    config::Config,
    domain::{clock::SharedClock, retry::RetryPolicy},
    egress::{resolver::ResolverActor, url_check::EgressRules},
    secret::SecretBox,
};

/// What every part of the engine shares; read-only after start.
pub struct Shared {
    pub db: DatabaseConnection,
    /// The cluster's own small pool (see `store::connect_control`).
    pub control_db: DatabaseConnection,
    pub clock: SharedClock,
    pub config: Arc<Config>,
    pub secrets: SecretBox,
    pub rules: EgressRules,
    pub retry: RetryPolicy,
    /// When a claimed delivery may still be sent, and its record's lease
    /// must be extended.
    pub window: lease_window::LeaseWindow,
    pub tls: Arc<rustls::ClientConfig>,
    /// The roots `tls` trusts, for endpoints that present a client certificate.
    pub trust: client::Trust,
    pub limits: client::Limits,
    /// Directly or through the egress proxy (`egress.proxy`).
    pub route: proxy::Route,
    pub metrics: crate::metrics::Metrics,
    /// The event types, their schemas and versions.
    pub catalog: Arc<crate::catalog::Catalog>,
    /// SQLite has one writer: this process's writers queue here instead of
    /// sleeping in SQLite's busy handler (which backs off in steps of up to
    /// 100 ms and made latency jump). The turn holds the writer's connection
    /// (`store::writer`).
    sqlite_writes: Option<tokio::sync::Mutex<crate::store::writer::Held>>,
    /// A stop has begun: nothing new is claimed or ingested.
    draining: std::sync::atomic::AtomicBool,
    /// The endpoints this instance holds, as its actors read them.
    pub leases: Arc<Leases>,
    pub activity: activity::Activity,
    /// Outbound sockets: every endpoint's places come from here.
    pub budget: budget::Budget,
    /// The open-files limit, as raised at start.
    pub files: crate::file_limit::FileLimit,
    /// Where endpoint notices go besides the partner's endpoints.
    pub routes: crate::notify::Routes,
    /// What the on-call lines about endpoints said lately (see `oncall`).
    pub oncall: oncall::OnCall,
    /// The tracer when `[telemetry]` is on (`app::prepare` starts it).
    pub telemetry: crate::telemetry::Telemetry,
    /// Endpoints whose fresh work waits as rows (see `behind`).
    pub behind: behind::Behind,
    /// Partners' endpoints as the last group commit read them (PostgreSQL).
    pub routing: crate::store::routing_cache::RoutingCache,
}

impl Shared {
    pub fn new(
        db: DatabaseConnection,
        control_db: DatabaseConnection,
        clock: SharedClock,
        config: Arc<Config>,
        secrets: SecretBox,
        trust: client::Trust,
        catalog: Arc<crate::catalog::Catalog>,
    ) -> Shared {
        let d = &config.delivery;
        let files = crate::file_limit::raise();
        let api = config
            .http
            .max_connections
            .min(usize::try_from(files.soft / 2).unwrap_or(usize::MAX));
        let connections =
            d.max_connections
                .resolve(files.soft, config.database.max_connections as usize, api);
        Shared {
            budget: budget::Budget::new(connections),
            files,
            rules: EgressRules::from_config(&config.egress),
            retry: RetryPolicy {
                schedule: d.schedule.clone(),
                jitter: d.jitter,
                max_age: d.max_age,
                retry_after_cap: d.retry_after_cap,
            },
            window: lease_window::LeaseWindow::new(d.lease, d.request_timeout),
            limits: client::Limits::from_config(d),
            route: proxy::Route::from_config(&config.egress),
            metrics: crate::metrics::Metrics::new(),
            sqlite_writes: config.database.is_sqlite().then(|| {
                let pool = db.get_sqlite_connection_pool().clone();
                tokio::sync::Mutex::new(crate::store::writer::Held::new(pool))
            }),
            draining: std::sync::atomic::AtomicBool::new(false),
            leases: Arc::new(Leases::new(
                crate::domain::ids::new_id("ins"),
                config.cluster.lease_ttl,
            )),
            activity: activity::Activity::default(),
            routes: crate::notify::Routes::from_config(&config),
            oncall: oncall::OnCall::default(),
            telemetry: crate::telemetry::Telemetry::off(),
            behind: behind::Behind::default(),
            routing: Default::default(),
            db,
            control_db,
            clock,
            config,
            secrets,
            tls: trust.config(),
            trust,
            catalog,
        }
    }

    /// Closes both pools (while the runtime still runs), then exports the
    /// spans still batched (waiting at most `telemetry.export_timeout`).
    pub async fn close_pools(&self) {
        if let Some(gate) = &self.sqlite_writes {
            gate.lock().await.release();
        }
        self.control_db.clone().close().await.ok();
        self.db.clone().close().await.ok();
        self.telemetry.shutdown();
    }

    /// Whether this instance is stopping (see `Engine::drain`).
    pub fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Waits for this process's turn to write on the hot path (SQLite only;
    /// PostgreSQL takes concurrent writers). The turn's connection takes the
    /// hot path's transactions (`store::writer::begin`).
    pub async fn write_turn(
        &self,
    ) -> Option<tokio::sync::MutexGuard<'_, crate::store::writer::Held>> {
        match &self.sqlite_writes {
            Some(gate) => Some(gate.lock().await),
            None => None,
        }
    }
}

/// What the cluster actor works with: the control pool, the clock, the
/// lease period, the leases the engine's actors read, and how busy they are.
fn cluster_node(shared: &Arc<Shared>) -> Node {
    let engine = shared.clone();
    Node {
        control_db: shared.control_db.clone(),
        clock: shared.clock.clone(),
        config: shared.config.cluster.clone(),
        leases: shared.leases.clone(),
        load: Box::new(move || crate::store::cluster::Load {
            in_flight: engine.activity.in_flight(),
            actors: engine.activity.actors(),
            draining: engine.is_draining(),
        }),
    }
}

/// The running engine's actors.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
    pub fanout: Addr<fanout::FanoutActor>,
    pub recorder: Addr<recorder::Recorder>,
    pub health: Addr<health_sweep::HealthSweep>,
    pub resolver: Addr<ResolverActor>,
    pub cluster: Addr<ClusterActor>,
    committer: Addr<committer::Committer>,
    threads: Arc<threads::Threads>,
}

impl Engine {
    /// Registers this instance in the cluster and starts the actors on the
    /// current arbiter. `listen`: the address the API answers on, for operators.
    pub async fn start(shared: Arc<Shared>, listen: &str) -> anyhow::Result<Engine> {
        let role = shared.config.cluster.role;
        // The silence this instance starts into, if long enough to tell
        // partners of: read before its first heartbeat renews the pulse.
        let pulse = crate::store::pulse::last(&shared.db)
            .await
            .map_err(|e| anyhow::anyhow!("reading the delivery pulse: {e}"))?;
        let threshold = shared.config.incidents.instances_down.as_millis() as i64;
        let quiet = crate::domain::incident::silent_since(pulse, shared.clock.now_ms(), threshold);
        let instance = crate::cluster::this_instance(shared.leases.instance_id(), listen, role);
        crate::store::cluster::register(&shared.db, &instance)
            .await
            .map_err(|e| anyhow::anyhow!("registering this instance in the database: {e}"))?;
        let resolver =
            ResolverActor::new(&shared.config.egress, shared.rules.policy.clone())?.start();
        // The fanout, the recorder and the cluster actor address each other:
        // the other two start inside the fanout's constructor, where the
        // fanout's address exists.
        let threads = Arc::new(threads::Threads::per_core());
        let mut started = None;
        let fanout = fanout::FanoutActor::create(|ctx| {
            let (wake, disabled) = (ctx.address().recipient(), ctx.address().recipient());
            let on_recorder_thread = shared.clone();
            let rec = recorder::Recorder::start_in_arbiter(&threads.recorder(), move |_| {
                recorder::Recorder::new(on_recorder_thread, wake, disabled)
            });
            let node = Arc::new(cluster_node(&shared));
            let cluster = ClusterActor::new(node, instance, ctx.address().recipient()).start();
            started = Some((rec.clone(), cluster.clone()));
            fanout::FanoutActor::new(
                shared.clone(),
                rec.clone().recipient(),
                rec.recipient(),
                resolver.clone(),
                cluster.recipient(),
                threads.clone(),
            )
        });
        let (recorder, cluster) =
            started.ok_or_else(|| anyhow::anyhow!("the recorder did not start"))?;
        let health = health_sweep::HealthSweep::new(
            shared.clone(),
            fanout.clone().recipient(),
            fanout.clone().recipient(),
            quiet,
        )
        .start();
        // Mail goes out from the instances that deliver.
        if let Some(smtp) = shared.config.smtp.clone().filter(|_| role.delivers()) {
            mailer::Mailer::new(shared.clone(), smtp)
                .map_err(|e| anyhow::anyhow!("smtp.url: {e}"))?
                .start();
        }
        let committer = {
            let (shared, hand_over) = (shared.clone(), fanout.clone().recipient());
            committer::Committer::start_in_arbiter(&threads.first(), move |_| {
                committer::Committer::new(shared, hand_over)
            })
        };
        Ok(Engine {
            committer,
            threads,
            shared,
            fanout,
            recorder,
            health,
            resolver,
            cluster,
        })
    }

    /// The first half of a graceful stop: claim nothing more, hand queued
    /// deliveries back at once (another instance takes them), and wait up to
    /// `grace` for attempts in flight to finish and be recorded. Ingest
    /// answers 503 from now on.
    pub async fn drain(&self, grace: std::time::Duration) {
        self.shared_draining()
            .store(true, std::sync::atomic::Ordering::Release);
        self.fanout.do_send(endpoint::Drain);
        let deadline = std::time::Instant::now() + grace;
        loop {
            let busy = self.fanout.send(messages::RunningActors).await.unwrap_or(0);
            if busy == 0 {
                break;
            }
            if std::time::Instant::now() >= deadline {
                tracing::warn!(
                    actors = busy,
                    "the shutdown grace ran out with attempts in flight; their leases bring them back"
                );
                break;
            }
            actix_rt::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // Hand every lease back now: another instance takes over at its next
        // heartbeat instead of waiting out the lease period.
        match self.cluster.send(Leave).await {
            Ok(Ok(n)) => tracing::info!(endpoints = n, "handed the endpoint leases back"),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "handing the leases back failed; they lapse after the lease period")
            }
            Err(e) => {
                tracing::warn!(error = %e, "the cluster actor is gone; leases lapse after the lease period")
            }
        }
    }

    fn shared_draining(&self) -> &std::sync::atomic::AtomicBool {
        &self.shared.draining
    }

    /// Stops the actors and waits (up to two seconds) until they are gone, so
    /// that nothing they hold outlives the runtime. Claimed work not yet
    /// recorded comes back when its lease ends.
    pub async fn shutdown(&self) {
        self.fanout.do_send(messages::StopNow);
        self.health.do_send(messages::StopNow);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while (self.fanout.connected() || self.recorder.connected() || self.health.connected())
            && std::time::Instant::now() < deadline
        {
            actix_rt::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        // Endpoint actors stop on the fanout's word; give them a moment.
        actix_rt::time::sleep(std::time::Duration::from_millis(50)).await;
        self.threads.stop();
    }

    /// Tells the fanout that new events are committed.
    pub fn wake(&self) {
        self.fanout.do_send(messages::Wake);
    }

    /// Stores and publishes a few new events in the next group commit (see
    /// `committer`), and hands their deliveries to the endpoint actors.
    pub async fn commit_fresh(
        &self,
        events: Vec<crate::domain::event::NewEvent>,
        now_ms: i64,
    ) -> Result<(), crate::store::StoreError> {
        let commit = committer::Commit { events, now_ms };
        match self.committer.send(commit).await {
            Ok(result) => result,
            Err(e) => Err(crate::store::StoreError::Db(sea_orm::DbErr::Custom(
                format!("the ingest committer is gone: {e}"),
            ))),
        }
    }
}
