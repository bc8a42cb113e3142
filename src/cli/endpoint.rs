//! `hookd endpoint …`: an operator's view of every partner's endpoints, as
//! the operator API gives it (`/v1/admin/endpoints`), and the partner API's
//! changes made on the partner's behalf (`endpoint_change`). Never a secret,
//! except the new endpoint's, printed once.

use clap::{Args, Subcommand, ValueEnum};

use super::{
    ctx::Ctx,
    dev,
    endpoint_change::{self, EndpointUpdate},
    endpoint_view,
    exit::{self, from_problem},
    out::{self, emit},
    page::PageArgs,
    routing_args::{self, FilterArgs, OnDeadArg, OrderingArg},
};
use crate::{
    http::{
        admin_endpoints::AdminEndpointOut,
        page::Page,
        partner::{
            endpoint_ops::{check_range, check_text, check_types},
            endpoint_shapes::{EndpointCreated, EndpointOut, KeyShown},
        },
    },
    store::{
        self,
        admin::EndpointSearch,
        endpoints::{EndpointStatus, NewEndpoint},
    },
};

#[derive(Debug, Subcommand)]
pub enum EndpointCommand {
    /// Register an endpoint for a partner; its signing secret is printed this once.
    Create(EndpointCreate),
    /// List every partner's endpoints, oldest first, with what each holds.
    List(EndpointList),
    /// Show an endpoint: its partner, settings, status, failing since, what
    /// it holds, its circuit and its last error.
    Get {
        /// The endpoint's id (`ep_…`).
        id: String,
        /// Print it as JSON, as GET /v1/admin/endpoints/{id} answers.
        #[arg(long)]
        json: bool,
    },
    /// Change an endpoint's URL, description, event types, schema version,
    /// concurrency, rate limit, ordering or filter, as PATCH
    /// /v1/endpoints/{id} does; written to the audit log.
    Update(EndpointUpdate),
    /// List the subjects an ordered endpoint holds up behind their heads, and why.
    Held {
        /// The endpoint's id.
        id: String,
        /// Print them as JSON, as GET /v1/admin/endpoints/{id}/held-subjects answers.
        #[arg(long)]
        json: bool,
    },
    /// Enable an endpoint: its paused deliveries from within the replay
    /// window are due at once. Written to the audit log.
    Enable {
        /// The endpoint's id.
        id: String,
        /// Why, for the audit log.
        #[arg(long)]
        reason: Option<String>,
        /// Print the endpoint as JSON, as POST /v1/admin/endpoints/{id}/enable answers.
        #[arg(long)]
        json: bool,
    },
    /// Disable an endpoint: nothing is sent to it until it is enabled, and
    /// what it holds is paused. Written to the audit log.
    Disable {
        /// The endpoint's id.
        id: String,
        /// Why: the disabled reason its partner sees (default: "disabled by the operator").
        #[arg(long)]
        reason: Option<String>,
        /// Print the endpoint as JSON, as POST /v1/admin/endpoints/{id}/disable answers.
        #[arg(long)]
        json: bool,
    },
    /// Show and set what an endpoint presents to its receiver: static
    /// headers, OAuth2 client credentials, a client certificate (secrets
    /// redacted), and its v1a public keys. Changes are audited.
    #[command(subcommand)]
    Auth(super::endpoint_auth::AuthCommand),
    /// Rotate the signing secret (the new one is printed this once); the
    /// previous one keeps signing for the overlap. Audited.
    RotateSecret {
        /// The endpoint's id.
        id: String,
        /// How long the previous secret keeps signing, in seconds (default 86400).
        #[arg(long, value_name = "SECONDS")]
        overlap_seconds: Option<u64>,
        /// The new key's scheme (default v1).
        #[arg(long, value_enum, value_name = "SCHEME")]
        scheme: Option<super::secret::NewScheme>,
        /// Print it as JSON, as POST /v1/endpoints/{id}/secret/rotate answers.
        #[arg(long)]
        json: bool,
    },
    /// End the rotation overlap now: only the newest secret signs. Audited.
    ExpirePrevious {
        /// The endpoint's id.
        id: String,
        /// Print it as JSON, as POST /v1/endpoints/{id}/secret/expire-previous answers.
        #[arg(long)]
        json: bool,
    },
    /// Queue a webhook.test event for this endpoint only (a running serve
    /// sends it). Audited.
    Test {
        /// The endpoint's id.
        id: String,
        /// Print it as JSON, as POST /v1/endpoints/{id}/test answers.
        #[arg(long)]
        json: bool,
    },
    /// Queue a manual attempt of every failed or dead delivery created in a
    /// time range (within the replay window). Audited.
    Recover {
        /// The endpoint's id.
        id: String,
        /// Deliveries created at or after this time (RFC 3339).
        #[arg(long, value_name = "TIME")]
        since: String,
        /// Deliveries created before this time (RFC 3339; default now).
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
        /// Print it as JSON, as POST /v1/admin/endpoints/{id}/recover answers.
        #[arg(long)]
        json: bool,
    },
    /// Send the conformance suite to the endpoint, signed with its stored
    /// secret, and print the scorecard; exit 1 if a case failed. Audited.
    Check {
        /// The endpoint's id.
        id: String,
        /// Print it as JSON, as POST /v1/endpoints/{id}/check answers.
        #[arg(long)]
        json: bool,
    },
    /// Try the endpoint's filter, or one being written, on a sample event or
    /// one of the partner's events.
    FilterTest(Box<super::filter_test::FilterTestArgs>),
    /// List the endpoint's conformance checks, newest first, with their scorecards.
    Checks {
        /// The endpoint's id.
        id: String,
        #[command(flatten)]
        page: PageArgs,
        /// Print the page as JSON, as GET /v1/endpoints/{id}/checks answers.
        #[arg(long)]
        json: bool,
    },
    /// Delete an endpoint with its deliveries and their attempts (no undo),
    /// as DELETE /v1/endpoints/{id} does; written to the audit log.
    Delete {
        /// The endpoint's id.
        id: String,
        /// Delete without asking.
        #[arg(long)]
        yes: bool,
        /// Print `{"id": …, "deleted": true}`.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct EndpointCreate {
    /// The partner the endpoint belongs to.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: String,
    /// Where to deliver: public https on port 443 or 8443, unless the
    /// egress settings allow more (or --dev, for a receiver on this machine).
    #[arg(long)]
    url: String,
    /// Event types to receive, comma-separated (`usage.*` matches a family;
    /// default: every type).
    #[arg(long, value_delimiter = ',', value_name = "TYPES")]
    event_types: Vec<String>,
    /// What the endpoint is for, for people.
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// Requests in flight at most, 1 to 256 (default: delivery.default_concurrency).
    #[arg(long, value_name = "N")]
    concurrency: Option<u32>,
    /// Requests per second at most, 1 to 10000 (default: no limit).
    #[arg(long, value_name = "N")]
    rate_limit: Option<u32>,
    /// How deliveries are signed: v1 (HMAC, a shared secret) or v1a
    /// (Ed25519: receivers verify with the printed public key).
    #[arg(long, value_enum, default_value = "v1", value_name = "SCHEME")]
    signature_scheme: SchemeArg,
    /// none, or subject: one delivery at a time per subject, in commit order.
    #[arg(long, value_enum, default_value = "none", value_name = "ORDERING")]
    ordering: OrderingArg,
    /// What an ordered subject does when its head dies: skip to the next,
    /// or hold until the head is replayed or skipped.
    #[arg(long, value_enum, default_value = "skip", value_name = "ON_DEAD")]
    on_dead: OnDeadArg,
    #[command(flatten)]
    filter: FilterArgs,
    /// Print the endpoint and its secret as JSON, as POST /v1/endpoints answers.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SchemeArg {
    V1,
    V1a,
}

impl From<SchemeArg> for crate::signing::Scheme {
    fn from(s: SchemeArg) -> Self {
        match s {
            SchemeArg::V1 => crate::signing::Scheme::V1,
            SchemeArg::V1a => crate::signing::Scheme::V1a,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum StatusArg {
    Active,
    Paused,
    Disabled,
}

#[derive(Debug, Args)]
pub struct EndpointList {
    /// Only this partner's endpoints.
    #[arg(long, value_name = "PARTNER_ID")]
    partner: Option<String>,
    /// Only endpoints with this status.
    #[arg(long, value_enum)]
    status: Option<StatusArg>,
    /// Only endpoints failing now (no success since a failure).
    #[arg(long)]
    failing: bool,
    #[command(flatten)]
    page: PageArgs,
    /// Print the page as JSON, as GET /v1/admin/endpoints answers.
    #[arg(long)]
    json: bool,
}

pub async fn run(ctx: &Ctx, command: EndpointCommand) -> anyhow::Result<()> {
    match command {
        EndpointCommand::Create(c) => create(ctx, c).await,
        EndpointCommand::List(l) => list(ctx, l).await,
        EndpointCommand::Get { id, json } => endpoint_view::get(ctx, &id, json).await,
        EndpointCommand::Update(u) => endpoint_change::update(ctx, u).await,
        EndpointCommand::Held { id, json } => endpoint_view::held(ctx, &id, json).await,
        EndpointCommand::Enable { id, reason, json } => {
            endpoint_change::set_status(ctx, &id, EndpointStatus::Active, reason, json).await
        }
        EndpointCommand::Disable { id, reason, json } => {
            endpoint_change::set_status(ctx, &id, EndpointStatus::Disabled, reason, json).await
        }
        EndpointCommand::Auth(a) => super::endpoint_auth::run(ctx, a).await,
        EndpointCommand::Delete { id, yes, json } => {
            endpoint_change::delete(ctx, &id, yes, json).await
        }
        EndpointCommand::RotateSecret {
            id,
            overlap_seconds,
            scheme,
            json,
        } => super::secret::rotate(ctx, &id, overlap_seconds, scheme, json).await,
        EndpointCommand::ExpirePrevious { id, json } => {
            super::secret::expire_previous(ctx, &id, json).await
        }
        EndpointCommand::Test { id, json } => super::probe::test(ctx, &id, json).await,
        EndpointCommand::Recover {
            id,
            since,
            until,
            json,
        } => super::probe::recover(ctx, &id, since, until, json).await,
        EndpointCommand::Check { id, json } => super::probe::check(ctx, &id, json).await,
        EndpointCommand::FilterTest(a) => super::filter_test::run(ctx, *a).await,
        EndpointCommand::Checks { id, page, json } => {
            super::probe::checks(ctx, &id, &page, json).await
        }
    }
}

async fn create(ctx: &Ctx, c: EndpointCreate) -> anyhow::Result<()> {
    if store::partners::find(&ctx.db, &c.partner).await?.is_none() {
        return Err(exit::not_found(format!("partner {}", c.partner)));
    }
    let types: Vec<String> = c
        .event_types
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect();
    check_types(&types).map_err(from_problem)?;
    let description = c.description.unwrap_or_default();
    check_text("description", &description, 1000).map_err(from_problem)?;
    check_range("concurrency", c.concurrency, 1..=256).map_err(from_problem)?;
    check_range("rate_limit", c.rate_limit, 1..=10_000).map_err(from_problem)?;
    let filter = match c.filter.given()? {
        Some(given) => Some(routing_args::checked(ctx, &types, &given)?),
        None => None,
    };
    let url = ctx.checked_url("--url", &c.url).await?;
    let secrets = ctx.secrets()?;
    let new = NewEndpoint {
        partner_id: c.partner,
        url,
        description,
        event_types: types,
        concurrency: c
            .concurrency
            .unwrap_or(ctx.config.delivery.default_concurrency),
        rate_limit: c.rate_limit,
        schema_version: None,
        schema_versions: Default::default(),
        status: EndpointStatus::Active,
        ordering: c.ordering.into(),
        on_dead: c.on_dead.into(),
        filter,
    };
    let scheme = c.signature_scheme.into();
    let (e, secret) = store::endpoints::create(&ctx.db, &secrets, new, scheme, ctx.now()).await?;
    let partner_id = e.partner_id.clone();
    let needs_dev = ctx.needs_dev(&e.url);
    let created = EndpointCreated {
        endpoint: EndpointOut::from(e),
        key: KeyShown::of(&secret),
    };
    let mut shown = serde_json::to_value(&created)?;
    shown["partner_id"] = partner_id.into();
    emit(c.json, &shown, || {
        let e = &created.endpoint;
        let key = &created.key;
        let mut text = match (&key.secret, &key.public_key) {
            (Some(secret), _) => format!(
                "created endpoint {} -> {}\nsigning secret (shown this once): {secret}",
                e.id, e.url
            ),
            (None, public) => format!(
                "created endpoint {} -> {}\nv1a public key (receivers verify with it): {}",
                e.id,
                e.url,
                public.as_deref().unwrap_or_default()
            ),
        };
        if needs_dev {
            text.push_str(
                "\n(dev mode let this URL in: hookd delivers to it only while it runs with --dev)",
            );
        }
        if let Some(cmd) = key
            .secret
            .as_deref()
            .and_then(|secret| dev::receiver_command(&e.url, secret))
        {
            text.push_str(&format!(
                "\n\nthe example receiver for it, from the checkout:\n  {cmd}"
            ));
        }
        text
    })
}

async fn list(ctx: &Ctx, l: EndpointList) -> anyhow::Result<()> {
    let (limit, after) = l.page.resolve(&ctx.config.api)?;
    let search = EndpointSearch {
        partner_id: l.partner,
        status: l.status.map(|s| match s {
            StatusArg::Active => EndpointStatus::Active,
            StatusArg::Paused => EndpointStatus::Paused,
            StatusArg::Disabled => EndpointStatus::Disabled,
        }),
        failing: l.failing.then_some(true),
    };
    let rows = store::admin::endpoints(&ctx.db, &search, after.as_ref(), limit).await?;
    let ids: Vec<String> = rows.iter().map(|e| e.id.clone()).collect();
    let mut backlogs = store::admin::backlogs(&ctx.db, &ids).await?;
    let shown = Page::of(
        rows,
        limit,
        |e| (e.created_at, e.id.as_str()),
        |e| {
            let b = backlogs.remove(&e.id).unwrap_or_default();
            AdminEndpointOut::of(e, b)
        },
    );
    emit(l.json, &shown, || {
        let rows: Vec<Vec<String>> = shown
            .data
            .iter()
            .map(|a| {
                let e = &a.endpoint;
                vec![
                    e.id.clone(),
                    a.partner_id.clone(),
                    e.status.clone(),
                    out::cell(e.failing_since.clone()),
                    a.backlog.waiting.to_string(),
                    a.backlog.paused.to_string(),
                    e.url.clone(),
                ]
            })
            .collect();
        out::table(
            &[
                "ID",
                "PARTNER",
                "STATUS",
                "FAILING SINCE",
                "WAITING",
                "PAUSED",
                "URL",
            ],
            &rows,
        ) + &out::more(shown.next_cursor.as_deref())
    })
}
